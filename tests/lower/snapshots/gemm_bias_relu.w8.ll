declare i64 @llvm.smin.i64(i64, i64)

declare float @llvm.maximum.f32(float, float)

declare void @eqsat_gemmz_6x16_pb(ptr, i64, ptr, ptr, i64, i64, i64, i64, i64)

define internal void @gemm_bias_relu.body(ptr noalias nocapture align 4 %param.0, ptr noalias nocapture align 4 %param.1, ptr noalias nocapture align 4 %param.2, ptr noalias nocapture align 4 %param.3, ptr noalias nocapture align 4 %param.4, i64 %lo, i64 %hi) nounwind {
entry:
  ; stage matmul0
  br label %j_1_o.head1
j_1_o.head1:
  %j_1_o.5 = phi i64 [ %lo, %entry ], [ %n6, %j_1_o.latch3 ]
  %t7 = icmp slt i64 %j_1_o.5, %hi
  br i1 %t7, label %j_1_o.body2, label %j_1_o.exit4
j_1_o.body2:
  %t8 = mul i64 %j_1_o.5, 48
  %t9 = sub i64 80, %t8
  %t10 = call i64 @llvm.smin.i64(i64 48, i64 %t9)
  %t11 = add i64 %t10, 15
  %q12 = sdiv i64 %t11, 16
  br label %j_1_i_o.head14
j_1_i_o.head14:
  %j_1_i_o.18 = phi i64 [ 0, %j_1_o.body2 ], [ %n19, %j_1_i_o.latch16 ]
  %t20 = icmp slt i64 %j_1_i_o.18, %q12
  br i1 %t20, label %j_1_i_o.body15, label %j_1_i_o.exit17
j_1_i_o.body15:
  %t21 = mul i64 0, 11
  %t22 = sub i64 11, %t21
  br label %i_1_i_o.head23
i_1_i_o.head23:
  %i_1_i_o.27 = phi i64 [ 0, %j_1_i_o.body15 ], [ %n28, %i_1_i_o.latch25 ]
  %t29 = icmp slt i64 %i_1_i_o.27, %t22
  br i1 %t29, label %i_1_i_o.body24, label %i_1_i_o.exit26
i_1_i_o.body24:
  %t30 = mul i64 %i_1_i_o.27, 576
  %t31 = mul i64 0, 6336
  %t32 = add i64 %t30, %t31
  %t33 = mul i64 0, 96
  %t34 = add i64 %t32, %t33
  %p35 = getelementptr inbounds float, ptr %param.2, i64 %t34
  %t36 = mul i64 %j_1_i_o.18, 1536
  %t37 = mul i64 %j_1_o.5, 4608
  %t38 = add i64 %t36, %t37
  %t39 = mul i64 0, 1536
  %t40 = add i64 %t38, %t39
  %p41 = getelementptr inbounds float, ptr %param.4, i64 %t40
  %t42 = mul i64 %i_1_i_o.27, 480
  %t43 = mul i64 0, 5280
  %t44 = add i64 %t42, %t43
  %t45 = mul i64 %j_1_i_o.18, 16
  %t46 = add i64 %t44, %t45
  %t47 = mul i64 %j_1_o.5, 48
  %t48 = add i64 %t46, %t47
  %p49 = getelementptr inbounds float, ptr %param.0, i64 %t48
  %t50 = mul i64 %i_1_i_o.27, 6
  %t51 = sub i64 64, %t50
  %t52 = mul i64 0, 66
  %t53 = sub i64 %t51, %t52
  %t54 = call i64 @llvm.smin.i64(i64 6, i64 %t53)
  %t55 = mul i64 %j_1_o.5, 48
  %t56 = sub i64 80, %t55
  %t57 = call i64 @llvm.smin.i64(i64 48, i64 %t56)
  %t58 = mul i64 %j_1_i_o.18, 16
  %t59 = sub i64 %t57, %t58
  %t60 = call i64 @llvm.smin.i64(i64 16, i64 %t59)
  %t61 = mul i64 0, 96
  call void @eqsat_gemmz_6x16_pb(ptr %p35, i64 96, ptr %p41, ptr %p49, i64 80, i64 96, i64 %t54, i64 %t60, i64 %t61)
  br label %i_1_i_o.latch25
i_1_i_o.latch25:
  %n28 = add nuw nsw i64 %i_1_i_o.27, 1
  br label %i_1_i_o.head23
i_1_i_o.exit26:
  br label %j_1_i_o.latch16
j_1_i_o.latch16:
  %n19 = add nuw nsw i64 %j_1_i_o.18, 1
  br label %j_1_i_o.head14, !llvm.loop !0
j_1_i_o.exit17:
  ; stage matmul0.epilogue
  br label %ie.head62
ie.head62:
  %ie.66 = phi i64 [ 0, %j_1_i_o.exit17 ], [ %n67, %ie.latch64 ]
  %t68 = icmp slt i64 %ie.66, 64
  br i1 %t68, label %ie.body63, label %ie.exit65
ie.body63:
  %t69 = mul i64 %j_1_o.5, 48
  %t70 = sub i64 80, %t69
  %t71 = call i64 @llvm.smin.i64(i64 48, i64 %t70)
  br label %je_i.head72
je_i.head72:
  %je_i.76 = phi i64 [ 0, %ie.body63 ], [ %n77, %je_i.latch74 ]
  %t78 = icmp slt i64 %je_i.76, %t71
  br i1 %t78, label %je_i.body73, label %je_i.exit75
je_i.body73:
  %t79 = mul i64 %ie.66, 80
  %t80 = mul i64 %j_1_o.5, 48
  %t81 = add i64 %t79, %t80
  %t82 = add i64 %t81, %je_i.76
  %p83 = getelementptr inbounds float, ptr %param.0, i64 %t82
  %v84 = load float, ptr %p83, align 4
  %t85 = mul i64 %j_1_o.5, 48
  %t86 = add i64 %t85, %je_i.76
  %p87 = getelementptr inbounds float, ptr %param.1, i64 %t86
  %v88 = load float, ptr %p87, align 4
  %t89 = fadd nsz contract arcp afn float %v84, %v88
  %t90 = call nsz contract arcp afn float @llvm.maximum.f32(float %t89, float 0x0000000000000000)
  %t91 = mul i64 %ie.66, 80
  %t92 = mul i64 %j_1_o.5, 48
  %t93 = add i64 %t91, %t92
  %t94 = add i64 %t93, %je_i.76
  %p95 = getelementptr inbounds float, ptr %param.0, i64 %t94
  store float %t90, ptr %p95, align 4
  br label %je_i.latch74
je_i.latch74:
  %n77 = add nuw nsw i64 %je_i.76, 1
  br label %je_i.head72, !llvm.loop !2
je_i.exit75:
  br label %ie.latch64
ie.latch64:
  %n67 = add nuw nsw i64 %ie.66, 1
  br label %ie.head62, !llvm.loop !5
ie.exit65:
  br label %j_1_o.latch3
j_1_o.latch3:
  %n6 = add nuw nsw i64 %j_1_o.5, 1
  br label %j_1_o.head1
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

!0 = distinct !{!0, !1}

!1 = !{!"llvm.loop.unroll.disable"}

!2 = distinct !{!2, !3, !4}

!3 = !{!"llvm.loop.vectorize.enable", i1 true}

!4 = !{!"llvm.loop.vectorize.width", i32 8}

!5 = distinct !{!5, !6, !7}

!6 = !{!"llvm.loop.unroll.disable"}

!7 = !{!"llvm.loop.vectorize.enable", i1 false}
