declare i64 @llvm.smin.i64(i64, i64)

declare float @llvm.maximum.f32(float, float)

declare void @eqsat_gemmz_8x32_pb(ptr, i64, ptr, ptr, i64, i64, i64, i64, i64)

define internal void @gemm_bias_relu.body(ptr noalias nocapture align 4 %param.0, ptr noalias nocapture align 4 %param.1, ptr noalias nocapture align 4 %param.2, ptr noalias nocapture align 4 %param.3, ptr noalias nocapture align 4 %param.4, i64 %lo, i64 %hi) nounwind {
entry:
  ; stage matmul0
  br label %i_1_o_j_1_o.head1
i_1_o_j_1_o.head1:
  %i_1_o_j_1_o.5 = phi i64 [ %lo, %entry ], [ %n6, %i_1_o_j_1_o.latch3 ]
  %t7 = icmp slt i64 %i_1_o_j_1_o.5, %hi
  br i1 %t7, label %i_1_o_j_1_o.body2, label %i_1_o_j_1_o.exit4
i_1_o_j_1_o.body2:
  br label %i_1_i_o.head8
i_1_i_o.head8:
  %i_1_i_o.12 = phi i64 [ 0, %i_1_o_j_1_o.body2 ], [ %n13, %i_1_i_o.latch10 ]
  %t14 = icmp slt i64 %i_1_i_o.12, 4
  br i1 %t14, label %i_1_i_o.body9, label %i_1_i_o.exit11
i_1_i_o.body9:
  br label %j_1_i_o.head15
j_1_i_o.head15:
  %j_1_i_o.19 = phi i64 [ 0, %i_1_i_o.body9 ], [ %n20, %j_1_i_o.latch17 ]
  %t21 = icmp slt i64 %j_1_i_o.19, 3
  br i1 %t21, label %j_1_i_o.body16, label %j_1_i_o.exit18
j_1_i_o.body16:
  %t22 = mul i64 %i_1_i_o.12, 768
  %t23 = mul i64 %i_1_o_j_1_o.5, 3072
  %t24 = add i64 %t22, %t23
  %t25 = mul i64 0, 96
  %t26 = add i64 %t24, %t25
  %p27 = getelementptr inbounds float, ptr %param.2, i64 %t26
  %t28 = mul i64 %j_1_i_o.19, 3072
  %t29 = mul i64 0, 3072
  %t30 = add i64 %t28, %t29
  %p31 = getelementptr inbounds float, ptr %param.4, i64 %t30
  %t32 = mul i64 %i_1_i_o.12, 640
  %t33 = mul i64 %i_1_o_j_1_o.5, 2560
  %t34 = add i64 %t32, %t33
  %t35 = mul i64 %j_1_i_o.19, 32
  %t36 = add i64 %t34, %t35
  %p37 = getelementptr inbounds float, ptr %param.0, i64 %t36
  %t38 = mul i64 %j_1_i_o.19, 32
  %t39 = sub i64 80, %t38
  %t40 = call i64 @llvm.smin.i64(i64 32, i64 %t39)
  %t41 = mul i64 0, 96
  call void @eqsat_gemmz_8x32_pb(ptr %p27, i64 96, ptr %p31, ptr %p37, i64 80, i64 96, i64 8, i64 %t40, i64 %t41)
  br label %j_1_i_o.latch17
j_1_i_o.latch17:
  %n20 = add nuw nsw i64 %j_1_i_o.19, 1
  br label %j_1_i_o.head15
j_1_i_o.exit18:
  br label %i_1_i_o.latch10
i_1_i_o.latch10:
  %n13 = add nuw nsw i64 %i_1_i_o.12, 1
  br label %i_1_i_o.head8, !llvm.loop !0
i_1_i_o.exit11:
  ; stage matmul0.epilogue
  br label %ie_i.head42
ie_i.head42:
  %ie_i.46 = phi i64 [ 0, %i_1_i_o.exit11 ], [ %n47, %ie_i.latch44 ]
  %t48 = icmp slt i64 %ie_i.46, 32
  br i1 %t48, label %ie_i.body43, label %ie_i.exit45
ie_i.body43:
  br label %je_i.head49
je_i.head49:
  %je_i.53 = phi i64 [ 0, %ie_i.body43 ], [ %n54, %je_i.latch51 ]
  %t55 = icmp slt i64 %je_i.53, 80
  br i1 %t55, label %je_i.body50, label %je_i.exit52
je_i.body50:
  %t56 = mul i64 %i_1_o_j_1_o.5, 2560
  %t57 = mul i64 %ie_i.46, 80
  %t58 = add i64 %t56, %t57
  %t59 = add i64 %t58, %je_i.53
  %p60 = getelementptr inbounds float, ptr %param.0, i64 %t59
  %v61 = load float, ptr %p60, align 4
  %p62 = getelementptr inbounds float, ptr %param.1, i64 %je_i.53
  %v63 = load float, ptr %p62, align 4
  %t64 = fadd nsz contract arcp afn float %v61, %v63
  %t65 = call nsz contract arcp afn float @llvm.maximum.f32(float %t64, float 0x0000000000000000)
  %t66 = mul i64 %i_1_o_j_1_o.5, 2560
  %t67 = mul i64 %ie_i.46, 80
  %t68 = add i64 %t66, %t67
  %t69 = add i64 %t68, %je_i.53
  %p70 = getelementptr inbounds float, ptr %param.0, i64 %t69
  store float %t65, ptr %p70, align 4
  br label %je_i.latch51
je_i.latch51:
  %n54 = add nuw nsw i64 %je_i.53, 1
  br label %je_i.head49, !llvm.loop !2
je_i.exit52:
  br label %ie_i.latch44
ie_i.latch44:
  %n47 = add nuw nsw i64 %ie_i.46, 1
  br label %ie_i.head42, !llvm.loop !5
ie_i.exit45:
  br label %i_1_o_j_1_o.latch3
i_1_o_j_1_o.latch3:
  %n6 = add nuw nsw i64 %i_1_o_j_1_o.5, 1
  br label %i_1_o_j_1_o.head1
i_1_o_j_1_o.exit4:
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

!4 = !{!"llvm.loop.vectorize.width", i32 16}

!5 = distinct !{!5, !6, !7}

!6 = !{!"llvm.loop.unroll.disable"}

!7 = !{!"llvm.loop.vectorize.enable", i1 false}
