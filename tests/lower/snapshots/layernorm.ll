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
  br label %i0.head1
i0.head1:
  %i0.5 = phi i64 [ 0, %entry ], [ %n6, %i0.latch3 ]
  %t7 = icmp slt i64 %i0.5, 64
  br i1 %t7, label %i0.body2, label %i0.exit4
i0.body2:
  store float 0x0000000000000000, ptr %l.mean, align 4
  br label %j.head8
j.head8:
  %j.12 = phi i64 [ 0, %i0.body2 ], [ %n13, %j.latch10 ]
  %t14 = icmp slt i64 %j.12, 768
  br i1 %t14, label %j.body9, label %j.exit11
j.body9:
  %v15 = load float, ptr %l.mean, align 4
  %t16 = mul i64 %i0.5, 768
  %t17 = add i64 %t16, %j.12
  %p18 = getelementptr inbounds float, ptr %param.1, i64 %t17
  %v19 = load float, ptr %p18, align 4
  %t20 = fadd reassoc nsz contract arcp afn float %v15, %v19
  store float %t20, ptr %l.mean, align 4
  br label %j.latch10
j.latch10:
  %n13 = add nuw nsw i64 %j.12, 1
  br label %j.head8, !llvm.loop !0
j.exit11:
  %v21 = load float, ptr %l.mean, align 4
  %t22 = fmul reassoc nsz contract arcp afn float %v21, 0x3F55555560000000
  store float %t22, ptr %l.mean, align 4
  store float 0x0000000000000000, ptr %l.rstd, align 4
  br label %j_1.head23
j_1.head23:
  %j_1.27 = phi i64 [ 0, %j.exit11 ], [ %n28, %j_1.latch25 ]
  %t29 = icmp slt i64 %j_1.27, 768
  br i1 %t29, label %j_1.body24, label %j_1.exit26
j_1.body24:
  %v30 = load float, ptr %l.rstd, align 4
  %t31 = mul i64 %i0.5, 768
  %t32 = add i64 %t31, %j_1.27
  %p33 = getelementptr inbounds float, ptr %param.1, i64 %t32
  %v34 = load float, ptr %p33, align 4
  %v35 = load float, ptr %l.mean, align 4
  %t36 = fsub nsz contract arcp afn float %v34, %v35
  %t37 = mul i64 %i0.5, 768
  %t38 = add i64 %t37, %j_1.27
  %p39 = getelementptr inbounds float, ptr %param.1, i64 %t38
  %v40 = load float, ptr %p39, align 4
  %v41 = load float, ptr %l.mean, align 4
  %t42 = fsub nsz contract arcp afn float %v40, %v41
  %t43 = fmul nsz contract arcp afn float %t36, %t42
  %t44 = fadd reassoc nsz contract arcp afn float %v30, %t43
  store float %t44, ptr %l.rstd, align 4
  br label %j_1.latch25
j_1.latch25:
  %n28 = add nuw nsw i64 %j_1.27, 1
  br label %j_1.head23, !llvm.loop !3
j_1.exit26:
  %v45 = load float, ptr %l.rstd, align 4
  %t46 = fmul nsz contract arcp afn float %v45, 0x3F55555560000000
  %t47 = fadd nsz contract arcp afn float %t46, 0x3EE4F8B580000000
  %c48 = call nsz contract arcp afn float @eqsat_rsqrt(float %t47)
  store float %c48, ptr %l.rstd, align 4
  br label %j_2.head49
j_2.head49:
  %j_2.53 = phi i64 [ 0, %j_1.exit26 ], [ %n54, %j_2.latch51 ]
  %t55 = icmp slt i64 %j_2.53, 768
  br i1 %t55, label %j_2.body50, label %j_2.exit52
j_2.body50:
  %t56 = mul i64 %i0.5, 768
  %t57 = add i64 %t56, %j_2.53
  %p58 = getelementptr inbounds float, ptr %param.1, i64 %t57
  %v59 = load float, ptr %p58, align 4
  %v60 = load float, ptr %l.mean, align 4
  %t61 = fsub nsz contract arcp afn float %v59, %v60
  %v62 = load float, ptr %l.rstd, align 4
  %t63 = fmul nsz contract arcp afn float %t61, %v62
  %p64 = getelementptr inbounds float, ptr %param.2, i64 %j_2.53
  %v65 = load float, ptr %p64, align 4
  %t66 = fmul nsz contract arcp afn float %t63, %v65
  %p67 = getelementptr inbounds float, ptr %param.3, i64 %j_2.53
  %v68 = load float, ptr %p67, align 4
  %t69 = fadd nsz contract arcp afn float %t66, %v68
  %t70 = mul i64 %i0.5, 768
  %t71 = add i64 %t70, %j_2.53
  %p72 = getelementptr inbounds float, ptr %param.0, i64 %t71
  store float %t69, ptr %p72, align 4
  br label %j_2.latch51
j_2.latch51:
  %n54 = add nuw nsw i64 %j_2.53, 1
  br label %j_2.head49, !llvm.loop !6
j_2.exit52:
  br label %i0.latch3
i0.latch3:
  %n6 = add nuw nsw i64 %i0.5, 1
  br label %i0.head1, !llvm.loop !9
i0.exit4:
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
