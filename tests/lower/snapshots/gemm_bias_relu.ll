declare i64 @llvm.smin.i64(i64, i64)

declare float @llvm.maximum.f32(float, float)

declare void @eqsat_gemmz_8x32_pb_m8_q1(ptr, i64, ptr, ptr, i64, i64, i64, i64) nounwind

declare void @eqsat_gemmz_8x32_pb_m8_q2(ptr, i64, ptr, ptr, i64, i64, i64, i64) nounwind

declare void @llvm.trap() cold noreturn nounwind

define internal void @eqsat_gemmz_8x32_pb.afbb753789(ptr %A, i64 %lda, ptr %B, ptr %C, i64 %ldc, i64 %kc, i64 %m, i64 %n, i64 %beta) nounwind {
entry:
  %m0 = icmp sle i64 %m, 0
  %n0 = icmp sle i64 %n, 0
  %none = or i1 %m0, %n0
  br i1 %none, label %out, label %some
some:
  %nw = add i64 %n, 15
  %nq = udiv i64 %nw, 16
  %mk = shl i64 %m, 2
  %key = or i64 %mk, %nq
  switch i64 %key, label %unreached [ i64 33, label %m8_q1 i64 34, label %m8_q2 ]
m8_q1:
  call void @eqsat_gemmz_8x32_pb_m8_q1(ptr %A, i64 %lda, ptr %B, ptr %C, i64 %ldc, i64 %kc, i64 %n, i64 %beta)
  br label %out
m8_q2:
  call void @eqsat_gemmz_8x32_pb_m8_q2(ptr %A, i64 %lda, ptr %B, ptr %C, i64 %ldc, i64 %kc, i64 %n, i64 %beta)
  br label %out
unreached:
  call void @llvm.trap()
  unreachable
out:
  ret void
}

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
  %p25 = getelementptr inbounds float, ptr %param.2, i64 %t24
  %t26 = mul i64 %j_1_i_o.19, 3072
  %p27 = getelementptr inbounds float, ptr %param.4, i64 %t26
  %t28 = mul i64 %i_1_i_o.12, 640
  %t29 = mul i64 %i_1_o_j_1_o.5, 2560
  %t30 = add i64 %t28, %t29
  %t31 = mul i64 %j_1_i_o.19, 32
  %t32 = add i64 %t30, %t31
  %p33 = getelementptr inbounds float, ptr %param.0, i64 %t32
  %t34 = sub i64 80, %t31
  %t35 = call i64 @llvm.smin.i64(i64 32, i64 %t34)
  call void @eqsat_gemmz_8x32_pb.afbb753789(ptr %p25, i64 96, ptr %p27, ptr %p33, i64 80, i64 96, i64 8, i64 %t35, i64 0)
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
  br label %ie_i.head36
ie_i.head36:
  %ie_i.40 = phi i64 [ 0, %i_1_i_o.exit11 ], [ %n41, %ie_i.latch38 ]
  %t42 = icmp slt i64 %ie_i.40, 32
  br i1 %t42, label %ie_i.body37, label %ie_i.exit39
ie_i.body37:
  br label %je_i.head43
je_i.head43:
  %je_i.47 = phi i64 [ 0, %ie_i.body37 ], [ %n48, %je_i.latch45 ]
  %t49 = icmp slt i64 %je_i.47, 80
  br i1 %t49, label %je_i.body44, label %je_i.exit46
je_i.body44:
  %t50 = mul i64 %i_1_o_j_1_o.5, 2560
  %t51 = mul i64 %ie_i.40, 80
  %t52 = add i64 %t50, %t51
  %t53 = add i64 %t52, %je_i.47
  %p54 = getelementptr inbounds float, ptr %param.0, i64 %t53
  %v55 = load float, ptr %p54, align 4
  %p56 = getelementptr inbounds float, ptr %param.1, i64 %je_i.47
  %v57 = load float, ptr %p56, align 4
  %t58 = fadd nsz contract arcp afn float %v55, %v57
  %t59 = call nsz contract arcp afn float @llvm.maximum.f32(float %t58, float 0x0000000000000000)
  store float %t59, ptr %p54, align 4
  br label %je_i.latch45
je_i.latch45:
  %n48 = add nuw nsw i64 %je_i.47, 1
  br label %je_i.head43, !llvm.loop !2
je_i.exit46:
  br label %ie_i.latch38
ie_i.latch38:
  %n41 = add nuw nsw i64 %ie_i.40, 1
  br label %ie_i.head36, !llvm.loop !5
ie_i.exit39:
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
