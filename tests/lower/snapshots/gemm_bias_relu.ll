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
  %t25 = mul i64 %i.12, 80
  %t26 = add i64 %t25, %j_i.22
  %t27 = mul i64 %j_1_o.5, 32
  %t28 = add i64 %t26, %t27
  %p29 = getelementptr inbounds float, ptr %param.0, i64 %t28
  store float 0x0000000000000000, ptr %p29, align 4
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
  %t30 = mul i64 %j_1_o.5, 32
  %t31 = sub i64 80, %t30
  %t32 = call i64 @llvm.smin.i64(i64 32, i64 %t31)
  %t33 = add i64 %t32, 31
  %q34 = sdiv i64 %t33, 32
  br label %j_1_i_o.head36
j_1_i_o.head36:
  %j_1_i_o.40 = phi i64 [ 0, %i.exit11 ], [ %n41, %j_1_i_o.latch38 ]
  %t42 = icmp slt i64 %j_1_i_o.40, %q34
  br i1 %t42, label %j_1_i_o.body37, label %j_1_i_o.exit39
j_1_i_o.body37:
  br label %i_1_i_o.head43
i_1_i_o.head43:
  %i_1_i_o.47 = phi i64 [ 0, %j_1_i_o.body37 ], [ %n48, %i_1_i_o.latch45 ]
  %t49 = icmp slt i64 %i_1_i_o.47, 8
  br i1 %t49, label %i_1_i_o.body44, label %i_1_i_o.exit46
i_1_i_o.body44:
  %t50 = mul i64 %i_1_i_o.47, 768
  %t51 = mul i64 0, 6144
  %t52 = add i64 %t50, %t51
  %t53 = mul i64 0, 96
  %t54 = add i64 %t52, %t53
  %p55 = getelementptr inbounds float, ptr %param.1, i64 %t54
  %t56 = mul i64 %j_1_i_o.40, 3072
  %t57 = mul i64 %j_1_o.5, 3072
  %t58 = add i64 %t56, %t57
  %t59 = mul i64 0, 3072
  %t60 = add i64 %t58, %t59
  %p61 = getelementptr inbounds float, ptr %param.4, i64 %t60
  %t62 = mul i64 %i_1_i_o.47, 640
  %t63 = mul i64 0, 5120
  %t64 = add i64 %t62, %t63
  %t65 = mul i64 %j_1_i_o.40, 32
  %t66 = add i64 %t64, %t65
  %t67 = mul i64 %j_1_o.5, 32
  %t68 = add i64 %t66, %t67
  %p69 = getelementptr inbounds float, ptr %param.0, i64 %t68
  %t70 = mul i64 %j_1_o.5, 32
  %t71 = sub i64 80, %t70
  %t72 = call i64 @llvm.smin.i64(i64 32, i64 %t71)
  %t73 = mul i64 %j_1_i_o.40, 32
  %t74 = sub i64 %t72, %t73
  call void @eqsat_gemm_8x32(ptr %p55, i64 96, ptr %p61, ptr %p69, i64 80, i64 96, i64 8, i64 %t74)
  br label %i_1_i_o.latch45
i_1_i_o.latch45:
  %n48 = add nuw nsw i64 %i_1_i_o.47, 1
  br label %i_1_i_o.head43
i_1_i_o.exit46:
  br label %j_1_i_o.latch38
j_1_i_o.latch38:
  %n41 = add nuw nsw i64 %j_1_i_o.40, 1
  br label %j_1_i_o.head36, !llvm.loop !5
j_1_i_o.exit39:
  ; stage matmul2.epilogue
  br label %ie.head75
ie.head75:
  %ie.79 = phi i64 [ 0, %j_1_i_o.exit39 ], [ %n80, %ie.latch77 ]
  %t81 = icmp slt i64 %ie.79, 64
  br i1 %t81, label %ie.body76, label %ie.exit78
ie.body76:
  %t82 = mul i64 %j_1_o.5, 32
  %t83 = sub i64 80, %t82
  %t84 = call i64 @llvm.smin.i64(i64 32, i64 %t83)
  br label %je_i.head85
je_i.head85:
  %je_i.89 = phi i64 [ 0, %ie.body76 ], [ %n90, %je_i.latch87 ]
  %t91 = icmp slt i64 %je_i.89, %t84
  br i1 %t91, label %je_i.body86, label %je_i.exit88
je_i.body86:
  %t92 = mul i64 %ie.79, 80
  %t93 = mul i64 %j_1_o.5, 32
  %t94 = add i64 %t92, %t93
  %t95 = add i64 %t94, %je_i.89
  %p96 = getelementptr inbounds float, ptr %param.0, i64 %t95
  %v97 = load float, ptr %p96, align 4
  %t98 = mul i64 %j_1_o.5, 32
  %t99 = add i64 %t98, %je_i.89
  %p100 = getelementptr inbounds float, ptr %param.3, i64 %t99
  %v101 = load float, ptr %p100, align 4
  %t102 = fadd reassoc nsz contract arcp afn float %v97, %v101
  %t103 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %t102, float 0x0000000000000000)
  %t104 = mul i64 %ie.79, 80
  %t105 = mul i64 %j_1_o.5, 32
  %t106 = add i64 %t104, %t105
  %t107 = add i64 %t106, %je_i.89
  %p108 = getelementptr inbounds float, ptr %param.0, i64 %t107
  store float %t103, ptr %p108, align 4
  br label %je_i.latch87
je_i.latch87:
  %n90 = add nuw nsw i64 %je_i.89, 1
  br label %je_i.head85, !llvm.loop !7
je_i.exit88:
  br label %ie.latch77
ie.latch77:
  %n80 = add nuw nsw i64 %ie.79, 1
  br label %ie.head75, !llvm.loop !10
ie.exit78:
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
