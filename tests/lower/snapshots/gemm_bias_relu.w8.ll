declare i64 @llvm.smin.i64(i64, i64)

declare float @llvm.maximum.f32(float, float)

declare void @eqsat_gemmz_6x16_pb_m4_q2(ptr, i64, ptr, ptr, i64, i64, i64, i64) nounwind

declare void @eqsat_gemmz_6x16_pb_m6_q2(ptr, i64, ptr, ptr, i64, i64, i64, i64) nounwind

declare void @llvm.trap() cold noreturn nounwind

define internal void @eqsat_gemmz_6x16_pb.e83241cd2b(ptr %A, i64 %lda, ptr %B, ptr %C, i64 %ldc, i64 %kc, i64 %m, i64 %n, i64 %beta) nounwind {
entry:
  %m0 = icmp sle i64 %m, 0
  %n0 = icmp sle i64 %n, 0
  %none = or i1 %m0, %n0
  br i1 %none, label %out, label %some
some:
  %nw = add i64 %n, 7
  %nq = udiv i64 %nw, 8
  %mk = shl i64 %m, 2
  %key = or i64 %mk, %nq
  switch i64 %key, label %unreached [ i64 18, label %m4_q2 i64 26, label %m6_q2 ]
m4_q2:
  call void @eqsat_gemmz_6x16_pb_m4_q2(ptr %A, i64 %lda, ptr %B, ptr %C, i64 %ldc, i64 %kc, i64 %n, i64 %beta)
  br label %out
m6_q2:
  call void @eqsat_gemmz_6x16_pb_m6_q2(ptr %A, i64 %lda, ptr %B, ptr %C, i64 %ldc, i64 %kc, i64 %n, i64 %beta)
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
  br label %j_1_i_o.head13
j_1_i_o.head13:
  %j_1_i_o.17 = phi i64 [ 0, %j_1_o.body2 ], [ %n18, %j_1_i_o.latch15 ]
  %t19 = icmp slt i64 %j_1_i_o.17, %q12
  br i1 %t19, label %j_1_i_o.body14, label %j_1_i_o.exit16
j_1_i_o.body14:
  br label %i_1_i_o.head20
i_1_i_o.head20:
  %i_1_i_o.24 = phi i64 [ 0, %j_1_i_o.body14 ], [ %n25, %i_1_i_o.latch22 ]
  %t26 = icmp slt i64 %i_1_i_o.24, 11
  br i1 %t26, label %i_1_i_o.body21, label %i_1_i_o.exit23
i_1_i_o.body21:
  %t27 = mul i64 %i_1_i_o.24, 576
  %p28 = getelementptr inbounds float, ptr %param.2, i64 %t27
  %t29 = mul i64 %j_1_i_o.17, 1536
  %t30 = mul i64 %j_1_o.5, 4608
  %t31 = add i64 %t29, %t30
  %p32 = getelementptr inbounds float, ptr %param.4, i64 %t31
  %t33 = mul i64 %i_1_i_o.24, 480
  %t34 = mul i64 %j_1_i_o.17, 16
  %t35 = add i64 %t33, %t34
  %t36 = mul i64 %j_1_o.5, 48
  %t37 = add i64 %t35, %t36
  %p38 = getelementptr inbounds float, ptr %param.0, i64 %t37
  %t39 = mul i64 %i_1_i_o.24, 6
  %t40 = sub i64 64, %t39
  %t41 = call i64 @llvm.smin.i64(i64 6, i64 %t40)
  %t42 = sub i64 80, %t36
  %t43 = call i64 @llvm.smin.i64(i64 48, i64 %t42)
  %t44 = sub i64 %t43, %t34
  %t45 = call i64 @llvm.smin.i64(i64 16, i64 %t44)
  call void @eqsat_gemmz_6x16_pb.e83241cd2b(ptr %p28, i64 96, ptr %p32, ptr %p38, i64 80, i64 96, i64 %t41, i64 %t45, i64 0)
  br label %i_1_i_o.latch22
i_1_i_o.latch22:
  %n25 = add nuw nsw i64 %i_1_i_o.24, 1
  br label %i_1_i_o.head20
i_1_i_o.exit23:
  br label %j_1_i_o.latch15
j_1_i_o.latch15:
  %n18 = add nuw nsw i64 %j_1_i_o.17, 1
  br label %j_1_i_o.head13, !llvm.loop !0
j_1_i_o.exit16:
  ; stage matmul0.epilogue
  br label %ie.head46
ie.head46:
  %ie.50 = phi i64 [ 0, %j_1_i_o.exit16 ], [ %n51, %ie.latch48 ]
  %t52 = icmp slt i64 %ie.50, 64
  br i1 %t52, label %ie.body47, label %ie.exit49
ie.body47:
  %t53 = mul i64 %j_1_o.5, 48
  %t54 = sub i64 80, %t53
  %t55 = call i64 @llvm.smin.i64(i64 48, i64 %t54)
  br label %je_i.head56
je_i.head56:
  %je_i.60 = phi i64 [ 0, %ie.body47 ], [ %n61, %je_i.latch58 ]
  %t62 = icmp slt i64 %je_i.60, %t55
  br i1 %t62, label %je_i.body57, label %je_i.exit59
je_i.body57:
  %t63 = mul i64 %ie.50, 80
  %t64 = mul i64 %j_1_o.5, 48
  %t65 = add i64 %t63, %t64
  %t66 = add i64 %t65, %je_i.60
  %p67 = getelementptr inbounds float, ptr %param.0, i64 %t66
  %v68 = load float, ptr %p67, align 4
  %t69 = add i64 %t64, %je_i.60
  %p70 = getelementptr inbounds float, ptr %param.1, i64 %t69
  %v71 = load float, ptr %p70, align 4
  %t72 = fadd nsz contract arcp afn float %v68, %v71
  %t73 = call nsz contract arcp afn float @llvm.maximum.f32(float %t72, float 0x0000000000000000)
  store float %t73, ptr %p67, align 4
  br label %je_i.latch58
je_i.latch58:
  %n61 = add nuw nsw i64 %je_i.60, 1
  br label %je_i.head56, !llvm.loop !2
je_i.exit59:
  br label %ie.latch48
ie.latch48:
  %n51 = add nuw nsw i64 %ie.50, 1
  br label %ie.head46, !llvm.loop !5
ie.exit49:
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
