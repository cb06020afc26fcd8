declare i64 @llvm.smin.i64(i64, i64)

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
  ; stage layernorm3
  br label %i0_o.head1
i0_o.head1:
  %i0_o.5 = phi i64 [ %lo, %entry ], [ %n6, %i0_o.latch3 ]
  %t7 = icmp slt i64 %i0_o.5, %hi
  br i1 %t7, label %i0_o.body2, label %i0_o.exit4
i0_o.body2:
  %t8 = mul i64 %i0_o.5, 11
  %t9 = sub i64 64, %t8
  %t10 = call i64 @llvm.smin.i64(i64 11, i64 %t9)
  br label %i0_i.head11
i0_i.head11:
  %i0_i.15 = phi i64 [ 0, %i0_o.body2 ], [ %n16, %i0_i.latch13 ]
  %t17 = icmp slt i64 %i0_i.15, %t10
  br i1 %t17, label %i0_i.body12, label %i0_i.exit14
i0_i.body12:
  store float 0x0000000000000000, ptr %l.mean, align 4
  br label %j.head18
j.head18:
  %j.22 = phi i64 [ 0, %i0_i.body12 ], [ %n23, %j.latch20 ]
  %t24 = icmp slt i64 %j.22, 768
  br i1 %t24, label %j.body19, label %j.exit21
j.body19:
  %v25 = load float, ptr %l.mean, align 4
  %t26 = mul i64 %i0_i.15, 768
  %t27 = mul i64 %i0_o.5, 8448
  %t28 = add i64 %t26, %t27
  %t29 = add i64 %t28, %j.22
  %p30 = getelementptr inbounds float, ptr %param.1, i64 %t29
  %v31 = load float, ptr %p30, align 4
  %t32 = fadd reassoc nsz contract arcp afn float %v25, %v31
  store float %t32, ptr %l.mean, align 4
  br label %j.latch20
j.latch20:
  %n23 = add nuw nsw i64 %j.22, 1
  br label %j.head18, !llvm.loop !0
j.exit21:
  %v33 = load float, ptr %l.mean, align 4
  %t34 = fmul reassoc nsz contract arcp afn float %v33, 0x3F55555560000000
  store float %t34, ptr %l.mean, align 4
  store float 0x0000000000000000, ptr %l.rstd, align 4
  br label %j_1.head35
j_1.head35:
  %j_1.39 = phi i64 [ 0, %j.exit21 ], [ %n40, %j_1.latch37 ]
  %t41 = icmp slt i64 %j_1.39, 768
  br i1 %t41, label %j_1.body36, label %j_1.exit38
j_1.body36:
  %v42 = load float, ptr %l.rstd, align 4
  %t43 = mul i64 %i0_i.15, 768
  %t44 = mul i64 %i0_o.5, 8448
  %t45 = add i64 %t43, %t44
  %t46 = add i64 %t45, %j_1.39
  %p47 = getelementptr inbounds float, ptr %param.1, i64 %t46
  %v48 = load float, ptr %p47, align 4
  %v49 = load float, ptr %l.mean, align 4
  %t50 = fsub nsz contract arcp afn float %v48, %v49
  %t51 = mul i64 %i0_i.15, 768
  %t52 = mul i64 %i0_o.5, 8448
  %t53 = add i64 %t51, %t52
  %t54 = add i64 %t53, %j_1.39
  %p55 = getelementptr inbounds float, ptr %param.1, i64 %t54
  %v56 = load float, ptr %p55, align 4
  %v57 = load float, ptr %l.mean, align 4
  %t58 = fsub nsz contract arcp afn float %v56, %v57
  %t59 = fmul nsz contract arcp afn float %t50, %t58
  %t60 = fadd reassoc nsz contract arcp afn float %v42, %t59
  store float %t60, ptr %l.rstd, align 4
  br label %j_1.latch37
j_1.latch37:
  %n40 = add nuw nsw i64 %j_1.39, 1
  br label %j_1.head35, !llvm.loop !3
j_1.exit38:
  %v61 = load float, ptr %l.rstd, align 4
  %t62 = fmul nsz contract arcp afn float %v61, 0x3F55555560000000
  %t63 = fadd nsz contract arcp afn float %t62, 0x3EE4F8B580000000
  %c64 = call nsz contract arcp afn float @eqsat_rsqrt(float %t63)
  store float %c64, ptr %l.rstd, align 4
  br label %j_2.head65
j_2.head65:
  %j_2.69 = phi i64 [ 0, %j_1.exit38 ], [ %n70, %j_2.latch67 ]
  %t71 = icmp slt i64 %j_2.69, 768
  br i1 %t71, label %j_2.body66, label %j_2.exit68
j_2.body66:
  %t72 = mul i64 %i0_i.15, 768
  %t73 = mul i64 %i0_o.5, 8448
  %t74 = add i64 %t72, %t73
  %t75 = add i64 %t74, %j_2.69
  %p76 = getelementptr inbounds float, ptr %param.1, i64 %t75
  %v77 = load float, ptr %p76, align 4
  %v78 = load float, ptr %l.mean, align 4
  %t79 = fsub nsz contract arcp afn float %v77, %v78
  %v80 = load float, ptr %l.rstd, align 4
  %t81 = fmul nsz contract arcp afn float %t79, %v80
  %p82 = getelementptr inbounds float, ptr %param.2, i64 %j_2.69
  %v83 = load float, ptr %p82, align 4
  %t84 = fmul nsz contract arcp afn float %t81, %v83
  %p85 = getelementptr inbounds float, ptr %param.3, i64 %j_2.69
  %v86 = load float, ptr %p85, align 4
  %t87 = fadd nsz contract arcp afn float %t84, %v86
  %t88 = mul i64 %i0_i.15, 768
  %t89 = mul i64 %i0_o.5, 8448
  %t90 = add i64 %t88, %t89
  %t91 = add i64 %t90, %j_2.69
  %p92 = getelementptr inbounds float, ptr %param.0, i64 %t91
  store float %t87, ptr %p92, align 4
  br label %j_2.latch67
j_2.latch67:
  %n70 = add nuw nsw i64 %j_2.69, 1
  br label %j_2.head65, !llvm.loop !6
j_2.exit68:
  br label %i0_i.latch13
i0_i.latch13:
  %n16 = add nuw nsw i64 %i0_i.15, 1
  br label %i0_i.head11, !llvm.loop !9
i0_i.exit14:
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

!9 = distinct !{!9, !10}

!10 = !{!"llvm.loop.unroll.disable"}
