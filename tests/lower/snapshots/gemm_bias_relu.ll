declare i64 @llvm.smin.i64(i64, i64)

declare float @llvm.maximum.f32(float, float)

declare void @eqsat_gemm_8x32(ptr, i64, ptr, ptr, i64, i64, i64, i64)

define internal void @gemm_bias_relu.body(ptr noalias nocapture align 4 %param.0, ptr noalias nocapture align 4 %param.1, ptr noalias nocapture align 4 %param.2, ptr noalias nocapture align 4 %param.3, ptr noalias nocapture align 4 %param.4, i64 %lo, i64 %hi) nounwind {
entry:
  ; stage matmul2
  br label %j_1_o.head1
j_1_o.head1:
  %j_1_o.5 = phi i64 [ 0, %entry ], [ %n6, %j_1_o.latch3 ]
  %t7 = icmp slt i64 %j_1_o.5, 3
  br i1 %t7, label %j_1_o.body2, label %j_1_o.exit4
j_1_o.body2:
  ; stage matmul2.init
  br label %i.head8
i.head8:
  %i.12 = phi i64 [ 0, %j_1_o.body2 ], [ %n13, %i.latch10 ]
  %t14 = icmp slt i64 %i.12, 64
  br i1 %t14, label %i.body9, label %i.exit11
i.body9:
  %t15 = mul i64 %j_1_o.5, 32
  %t16 = sub i64 80, %t15
  %t17 = call i64 @llvm.smin.i64(i64 32, i64 %t16)
  br label %j_i.head18
j_i.head18:
  %j_i.22 = phi i64 [ 0, %i.body9 ], [ %n23, %j_i.latch20 ]
  %t24 = icmp slt i64 %j_i.22, %t17
  br i1 %t24, label %j_i.body19, label %j_i.exit21
j_i.body19:
  %t25 = mul i64 %j_1_o.5, 32
  %t26 = add i64 %j_i.22, %t25
  %p27 = getelementptr inbounds float, ptr %param.1, i64 %t26
  %v28 = load float, ptr %p27, align 4
  %t29 = mul i64 %i.12, 80
  %t30 = add i64 %t29, %j_i.22
  %t31 = mul i64 %j_1_o.5, 32
  %t32 = add i64 %t30, %t31
  %p33 = getelementptr inbounds float, ptr %param.0, i64 %t32
  store float %v28, ptr %p33, align 4
  br label %j_i.latch20
j_i.latch20:
  %n23 = add nuw nsw i64 %j_i.22, 1
  br label %j_i.head18, !llvm.loop !0
j_i.exit21:
  br label %i.latch10
i.latch10:
  %n13 = add nuw nsw i64 %i.12, 1
  br label %i.head8, !llvm.loop !3
i.exit11:
  br label %i_1_i_o.head34
i_1_i_o.head34:
  %i_1_i_o.38 = phi i64 [ 0, %i.exit11 ], [ %n39, %i_1_i_o.latch36 ]
  %t40 = icmp slt i64 %i_1_i_o.38, 8
  br i1 %t40, label %i_1_i_o.body35, label %i_1_i_o.exit37
i_1_i_o.body35:
  %t41 = mul i64 %j_1_o.5, 32
  %t42 = sub i64 80, %t41
  %t43 = call i64 @llvm.smin.i64(i64 32, i64 %t42)
  %t44 = add i64 %t43, 31
  %q45 = sdiv i64 %t44, 32
  br label %j_1_i_o.head47
j_1_i_o.head47:
  %j_1_i_o.51 = phi i64 [ 0, %i_1_i_o.body35 ], [ %n52, %j_1_i_o.latch49 ]
  %t53 = icmp slt i64 %j_1_i_o.51, %q45
  br i1 %t53, label %j_1_i_o.body48, label %j_1_i_o.exit50
j_1_i_o.body48:
  %t54 = mul i64 %i_1_i_o.38, 768
  %t55 = mul i64 0, 6144
  %t56 = add i64 %t54, %t55
  %t57 = mul i64 0, 96
  %t58 = add i64 %t56, %t57
  %p59 = getelementptr inbounds float, ptr %param.2, i64 %t58
  %t60 = mul i64 %j_1_i_o.51, 3072
  %t61 = mul i64 %j_1_o.5, 3072
  %t62 = add i64 %t60, %t61
  %t63 = mul i64 0, 3072
  %t64 = add i64 %t62, %t63
  %p65 = getelementptr inbounds float, ptr %param.4, i64 %t64
  %t66 = mul i64 %i_1_i_o.38, 640
  %t67 = mul i64 0, 5120
  %t68 = add i64 %t66, %t67
  %t69 = mul i64 %j_1_i_o.51, 32
  %t70 = add i64 %t68, %t69
  %t71 = mul i64 %j_1_o.5, 32
  %t72 = add i64 %t70, %t71
  %p73 = getelementptr inbounds float, ptr %param.0, i64 %t72
  %t74 = mul i64 %j_1_o.5, 32
  %t75 = sub i64 80, %t74
  %t76 = call i64 @llvm.smin.i64(i64 32, i64 %t75)
  %t77 = mul i64 %j_1_i_o.51, 32
  %t78 = sub i64 %t76, %t77
  call void @eqsat_gemm_8x32(ptr %p59, i64 96, ptr %p65, ptr %p73, i64 80, i64 96, i64 8, i64 %t78)
  br label %j_1_i_o.latch49
j_1_i_o.latch49:
  %n52 = add nuw nsw i64 %j_1_i_o.51, 1
  br label %j_1_i_o.head47
j_1_i_o.exit50:
  br label %i_1_i_o.latch36
i_1_i_o.latch36:
  %n39 = add nuw nsw i64 %i_1_i_o.38, 1
  br label %i_1_i_o.head34, !llvm.loop !5
i_1_i_o.exit37:
  ; stage matmul2.epilogue
  br label %ie.head79
ie.head79:
  %ie.83 = phi i64 [ 0, %i_1_i_o.exit37 ], [ %n84, %ie.latch81 ]
  %t85 = icmp slt i64 %ie.83, 64
  br i1 %t85, label %ie.body80, label %ie.exit82
ie.body80:
  %t86 = mul i64 %j_1_o.5, 32
  %t87 = sub i64 80, %t86
  %t88 = call i64 @llvm.smin.i64(i64 32, i64 %t87)
  br label %je_i.head89
je_i.head89:
  %je_i.93 = phi i64 [ 0, %ie.body80 ], [ %n94, %je_i.latch91 ]
  %t95 = icmp slt i64 %je_i.93, %t88
  br i1 %t95, label %je_i.body90, label %je_i.exit92
je_i.body90:
  %t96 = mul i64 %ie.83, 80
  %t97 = mul i64 %j_1_o.5, 32
  %t98 = add i64 %t96, %t97
  %t99 = add i64 %t98, %je_i.93
  %p100 = getelementptr inbounds float, ptr %param.0, i64 %t99
  %v101 = load float, ptr %p100, align 4
  %t102 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v101, float 0x0000000000000000)
  %t103 = mul i64 %ie.83, 80
  %t104 = mul i64 %j_1_o.5, 32
  %t105 = add i64 %t103, %t104
  %t106 = add i64 %t105, %je_i.93
  %p107 = getelementptr inbounds float, ptr %param.0, i64 %t106
  store float %t102, ptr %p107, align 4
  br label %je_i.latch91
je_i.latch91:
  %n94 = add nuw nsw i64 %je_i.93, 1
  br label %je_i.head89, !llvm.loop !7
je_i.exit92:
  br label %ie.latch81
ie.latch81:
  %n84 = add nuw nsw i64 %ie.83, 1
  br label %ie.head79, !llvm.loop !10
ie.exit82:
  br label %j_1_o.latch3
j_1_o.latch3:
  %n6 = add nuw nsw i64 %j_1_o.5, 1
  br label %j_1_o.head1, !llvm.loop !12
j_1_o.exit4:
  ret void
}

define void @gemm_bias_relu(ptr %args, i64 %lo, i64 %hi) nounwind {
entry:
  %g0 = getelementptr ptr, ptr %args, i64 0
  %a0 = load ptr, ptr %g0, align 8
  %g1 = getelementptr ptr, ptr %args, i64 1
  %a1 = load ptr, ptr %g1, align 8
  %g2 = getelementptr ptr, ptr %args, i64 2
  %a2 = load ptr, ptr %g2, align 8
  %g3 = getelementptr ptr, ptr %args, i64 3
  %a3 = load ptr, ptr %g3, align 8
  %g4 = getelementptr ptr, ptr %args, i64 4
  %a4 = load ptr, ptr %g4, align 8
  call void @gemm_bias_relu.body(ptr %a0, ptr %a1, ptr %a2, ptr %a3, ptr %a4, i64 %lo, i64 %hi)
  ret void
}

!0 = distinct !{!0, !1, !2}

!1 = !{!"llvm.loop.vectorize.enable", i1 true}

!2 = !{!"llvm.loop.vectorize.width", i32 16}

!3 = distinct !{!3, !4}

!4 = !{!"llvm.loop.unroll.disable"}

!5 = distinct !{!5, !6}

!6 = !{!"llvm.loop.unroll.disable"}

!7 = distinct !{!7, !8, !9}

!8 = !{!"llvm.loop.vectorize.enable", i1 true}

!9 = !{!"llvm.loop.vectorize.width", i32 16}

!10 = distinct !{!10, !11}

!11 = !{!"llvm.loop.unroll.disable"}

!12 = distinct !{!12, !13}

!13 = !{!"llvm.loop.unroll.disable"}
