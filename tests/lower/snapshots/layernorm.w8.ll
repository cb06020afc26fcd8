declare float @llvm.sqrt.f32(float)

define internal float @eqsat_rsqrt(float %x) alwaysinline nounwind {
  %s = call float @llvm.sqrt.f32(float %x)
  %y = fdiv float 1.0, %s
  ret float %y
}

define internal void @layernorm.body(ptr noalias nocapture align 4 %param.0, ptr noalias nocapture align 4 %param.1, ptr noalias nocapture align 4 %param.2, ptr noalias nocapture align 4 %param.3, i64 %lo, i64 %hi) nounwind {
entry:
  %l.mean = alloca [1 x float], align 64
  %l.rstd = alloca [1 x float], align 64
  ; stage layernorm0
  br label %i0_o.head1
i0_o.head1:
  %i0_o.5 = phi i64 [ %lo, %entry ], [ %n6, %i0_o.latch3 ]
  %t7 = icmp slt i64 %i0_o.5, %hi
  br i1 %t7, label %i0_o.body2, label %i0_o.exit4
i0_o.body2:
  br label %i0_i.head8
i0_i.head8:
  %i0_i.12 = phi i64 [ 0, %i0_o.body2 ], [ %n13, %i0_i.latch10 ]
  %t14 = icmp slt i64 %i0_i.12, 4
  br i1 %t14, label %i0_i.body9, label %i0_i.exit11
i0_i.body9:
  store float 0x0000000000000000, ptr %l.mean, align 4
  br label %j.head15
j.head15:
  %j.19 = phi i64 [ 0, %i0_i.body9 ], [ %n20, %j.latch17 ]
  %t21 = icmp slt i64 %j.19, 768
  br i1 %t21, label %j.body16, label %j.exit18
j.body16:
  %v22 = load float, ptr %l.mean, align 4
  %t23 = mul i64 %i0_i.12, 768
  %t24 = mul i64 %i0_o.5, 3072
  %t25 = add i64 %t23, %t24
  %t26 = add i64 %t25, %j.19
  %p27 = getelementptr inbounds float, ptr %param.1, i64 %t26
  %v28 = load float, ptr %p27, align 4
  %t29 = fadd reassoc nsz contract arcp afn float %v22, %v28
  store float %t29, ptr %l.mean, align 4
  br label %j.latch17
j.latch17:
  %n20 = add nuw nsw i64 %j.19, 1
  br label %j.head15, !llvm.loop !0
j.exit18:
  %v30 = load float, ptr %l.mean, align 4
  %t31 = fmul reassoc nsz contract arcp afn float %v30, 0x3F55555560000000
  store float %t31, ptr %l.mean, align 4
  store float 0x0000000000000000, ptr %l.rstd, align 4
  br label %j_1.head32
j_1.head32:
  %j_1.36 = phi i64 [ 0, %j.exit18 ], [ %n37, %j_1.latch34 ]
  %t38 = icmp slt i64 %j_1.36, 768
  br i1 %t38, label %j_1.body33, label %j_1.exit35
j_1.body33:
  %v39 = load float, ptr %l.rstd, align 4
  %t40 = mul i64 %i0_i.12, 768
  %t41 = mul i64 %i0_o.5, 3072
  %t42 = add i64 %t40, %t41
  %t43 = add i64 %t42, %j_1.36
  %p44 = getelementptr inbounds float, ptr %param.1, i64 %t43
  %v45 = load float, ptr %p44, align 4
  %v46 = load float, ptr %l.mean, align 4
  %t47 = fsub nsz contract arcp afn float %v45, %v46
  %t48 = mul i64 %i0_i.12, 768
  %t49 = mul i64 %i0_o.5, 3072
  %t50 = add i64 %t48, %t49
  %t51 = add i64 %t50, %j_1.36
  %p52 = getelementptr inbounds float, ptr %param.1, i64 %t51
  %v53 = load float, ptr %p52, align 4
  %v54 = load float, ptr %l.mean, align 4
  %t55 = fsub nsz contract arcp afn float %v53, %v54
  %t56 = fmul nsz contract arcp afn float %t47, %t55
  %t57 = fadd reassoc nsz contract arcp afn float %v39, %t56
  store float %t57, ptr %l.rstd, align 4
  br label %j_1.latch34
j_1.latch34:
  %n37 = add nuw nsw i64 %j_1.36, 1
  br label %j_1.head32, !llvm.loop !3
j_1.exit35:
  %v58 = load float, ptr %l.rstd, align 4
  %t59 = fmul nsz contract arcp afn float %v58, 0x3F55555560000000
  %t60 = fadd nsz contract arcp afn float %t59, 0x3EE4F8B580000000
  %c61 = call nsz contract arcp afn float @eqsat_rsqrt(float %t60)
  store float %c61, ptr %l.rstd, align 4
  br label %j_2.head62
j_2.head62:
  %j_2.66 = phi i64 [ 0, %j_1.exit35 ], [ %n67, %j_2.latch64 ]
  %t68 = icmp slt i64 %j_2.66, 768
  br i1 %t68, label %j_2.body63, label %j_2.exit65
j_2.body63:
  %t69 = mul i64 %i0_i.12, 768
  %t70 = mul i64 %i0_o.5, 3072
  %t71 = add i64 %t69, %t70
  %t72 = add i64 %t71, %j_2.66
  %p73 = getelementptr inbounds float, ptr %param.1, i64 %t72
  %v74 = load float, ptr %p73, align 4
  %v75 = load float, ptr %l.mean, align 4
  %t76 = fsub nsz contract arcp afn float %v74, %v75
  %v77 = load float, ptr %l.rstd, align 4
  %t78 = fmul nsz contract arcp afn float %t76, %v77
  %p79 = getelementptr inbounds float, ptr %param.2, i64 %j_2.66
  %v80 = load float, ptr %p79, align 4
  %t81 = fmul nsz contract arcp afn float %t78, %v80
  %p82 = getelementptr inbounds float, ptr %param.3, i64 %j_2.66
  %v83 = load float, ptr %p82, align 4
  %t84 = fadd nsz contract arcp afn float %t81, %v83
  %t85 = mul i64 %i0_i.12, 768
  %t86 = mul i64 %i0_o.5, 3072
  %t87 = add i64 %t85, %t86
  %t88 = add i64 %t87, %j_2.66
  %p89 = getelementptr inbounds float, ptr %param.0, i64 %t88
  store float %t84, ptr %p89, align 4
  br label %j_2.latch64
j_2.latch64:
  %n67 = add nuw nsw i64 %j_2.66, 1
  br label %j_2.head62, !llvm.loop !6
j_2.exit65:
  br label %i0_i.latch10
i0_i.latch10:
  %n13 = add nuw nsw i64 %i0_i.12, 1
  br label %i0_i.head8, !llvm.loop !9
i0_i.exit11:
  br label %i0_o.latch3
i0_o.latch3:
  %n6 = add nuw nsw i64 %i0_o.5, 1
  br label %i0_o.head1
i0_o.exit4:
  ret void
}

define void @layernorm(ptr %args, i64 %lo, i64 %hi) nounwind {
entry:
  %g0 = getelementptr ptr, ptr %args, i64 0
  %a0 = load ptr, ptr %g0, align 8
  %g1 = getelementptr ptr, ptr %args, i64 1
  %a1 = load ptr, ptr %g1, align 8
  %g2 = getelementptr ptr, ptr %args, i64 2
  %a2 = load ptr, ptr %g2, align 8
  %g3 = getelementptr ptr, ptr %args, i64 3
  %a3 = load ptr, ptr %g3, align 8
  call void @layernorm.body(ptr %a0, ptr %a1, ptr %a2, ptr %a3, i64 %lo, i64 %hi)
  ret void
}

!0 = distinct !{!0, !1, !2}

!1 = !{!"llvm.loop.vectorize.enable", i1 true}

!2 = !{!"llvm.loop.vectorize.width", i32 8}

!3 = distinct !{!3, !4, !5}

!4 = !{!"llvm.loop.vectorize.enable", i1 true}

!5 = !{!"llvm.loop.vectorize.width", i32 8}

!6 = distinct !{!6, !7, !8}

!7 = !{!"llvm.loop.vectorize.enable", i1 true}

!8 = !{!"llvm.loop.vectorize.width", i32 8}

!9 = distinct !{!9, !10, !11}

!10 = !{!"llvm.loop.unroll.disable"}

!11 = !{!"llvm.loop.vectorize.enable", i1 false}
