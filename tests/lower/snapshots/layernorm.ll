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
  %v48 = load float, ptr %p44, align 4
  %v49 = load float, ptr %l.mean, align 4
  %t50 = fsub nsz contract arcp afn float %v48, %v49
  %t51 = fmul nsz contract arcp afn float %t47, %t50
  %t52 = fadd reassoc nsz contract arcp afn float %v39, %t51
  store float %t52, ptr %l.rstd, align 4
  br label %j_1.latch34
j_1.latch34:
  %n37 = add nuw nsw i64 %j_1.36, 1
  br label %j_1.head32, !llvm.loop !3
j_1.exit35:
  %v53 = load float, ptr %l.rstd, align 4
  %t54 = fmul nsz contract arcp afn float %v53, 0x3F55555560000000
  %t55 = fadd nsz contract arcp afn float %t54, 0x3EE4F8B580000000
  %c56 = call nsz contract arcp afn float @eqsat_rsqrt(float %t55)
  store float %c56, ptr %l.rstd, align 4
  br label %j_2.head57
j_2.head57:
  %j_2.61 = phi i64 [ 0, %j_1.exit35 ], [ %n62, %j_2.latch59 ]
  %t63 = icmp slt i64 %j_2.61, 768
  br i1 %t63, label %j_2.body58, label %j_2.exit60
j_2.body58:
  %t64 = mul i64 %i0_i.12, 768
  %t65 = mul i64 %i0_o.5, 3072
  %t66 = add i64 %t64, %t65
  %t67 = add i64 %t66, %j_2.61
  %p68 = getelementptr inbounds float, ptr %param.1, i64 %t67
  %v69 = load float, ptr %p68, align 4
  %v70 = load float, ptr %l.mean, align 4
  %t71 = fsub nsz contract arcp afn float %v69, %v70
  %v72 = load float, ptr %l.rstd, align 4
  %t73 = fmul nsz contract arcp afn float %t71, %v72
  %p74 = getelementptr inbounds float, ptr %param.2, i64 %j_2.61
  %v75 = load float, ptr %p74, align 4
  %t76 = fmul nsz contract arcp afn float %t73, %v75
  %p77 = getelementptr inbounds float, ptr %param.3, i64 %j_2.61
  %v78 = load float, ptr %p77, align 4
  %t79 = fadd nsz contract arcp afn float %t76, %v78
  %p80 = getelementptr inbounds float, ptr %param.0, i64 %t67
  store float %t79, ptr %p80, align 4
  br label %j_2.latch59
j_2.latch59:
  %n62 = add nuw nsw i64 %j_2.61, 1
  br label %j_2.head57, !llvm.loop !6
j_2.exit60:
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

!2 = !{!"llvm.loop.vectorize.width", i32 16}

!3 = distinct !{!3, !4, !5}

!4 = !{!"llvm.loop.vectorize.enable", i1 true}

!5 = !{!"llvm.loop.vectorize.width", i32 16}

!6 = distinct !{!6, !7, !8}

!7 = !{!"llvm.loop.vectorize.enable", i1 true}

!8 = !{!"llvm.loop.vectorize.width", i32 16}

!9 = distinct !{!9, !10, !11}

!10 = !{!"llvm.loop.unroll.disable"}

!11 = !{!"llvm.loop.vectorize.enable", i1 false}
