declare float @llvm.maximum.f32(float, float)

declare float @llvm.rint.f32(float)

declare float @llvm.fma.f32(float, float, float)

define internal float @eqsat_exp(float %x) alwaysinline nounwind {
  %clo = fcmp olt float %x, 0xC05A000000000000
  %lo = select i1 %clo, float 0xC05A000000000000, float %x
  %chi = fcmp ogt float %lo, 0x4056300000000000
  %xc = select i1 %chi, float 0x4056300000000000, float %lo
  %t = fmul reassoc nsz contract arcp afn float %xc, 0x3FF7154760000000
  %n = call reassoc nsz contract arcp afn float @llvm.rint.f32(float %t)
  %r2 = call float @llvm.fma.f32(float %n, float 0xBFE6300000000000, float %xc)
  %r = call float @llvm.fma.f32(float %n, float 0x3F2BD01060000000, float %r2)
  %p0 = fmul reassoc nsz contract arcp afn float %r, 0x3F2A0D2CE0000000
  %p1 = fadd reassoc nsz contract arcp afn float %p0, 0x3F56E879C0000000
  %p2 = fmul reassoc nsz contract arcp afn float %p1, %r
  %p3 = fadd reassoc nsz contract arcp afn float %p2, 0x3F81112100000000
  %p4 = fmul reassoc nsz contract arcp afn float %p3, %r
  %p5 = fadd reassoc nsz contract arcp afn float %p4, 0x3FA5553820000000
  %p6 = fmul reassoc nsz contract arcp afn float %p5, %r
  %p7 = fadd reassoc nsz contract arcp afn float %p6, 0x3FC5555540000000
  %p8 = fmul reassoc nsz contract arcp afn float %p7, %r
  %p9 = fadd reassoc nsz contract arcp afn float %p8, 0x3FE0000000000000
  %rr = fmul reassoc nsz contract arcp afn float %r, %r
  %q0 = fmul reassoc nsz contract arcp afn float %p9, %rr
  %q1 = fadd reassoc nsz contract arcp afn float %q0, %r
  %q2 = fadd reassoc nsz contract arcp afn float %q1, 0x3FF0000000000000
  %ni = fptosi float %n to i32
  %n1 = ashr i32 %ni, 1
  %n2 = sub i32 %ni, %n1
  %eb1 = add i32 %n1, 127
  %sh1 = shl i32 %eb1, 23
  %sc1 = bitcast i32 %sh1 to float
  %eb2 = add i32 %n2, 127
  %sh2 = shl i32 %eb2, 23
  %sc2 = bitcast i32 %sh2 to float
  %y0 = fmul float %q2, %sc1
  %y = fmul float %y0, %sc2
  %big = fcmp ogt float %x, 0x40562E42E0000000
  %y1 = select i1 %big, float 0x7FF0000000000000, float %y
  %small = fcmp olt float %x, 0xC059FE3540000000
  %y2 = select i1 %small, float 0.0, float %y1
  ret float %y2
}

define internal void @softmax.body(ptr noalias nocapture align 4 %param.0, ptr noalias nocapture align 4 %param.1, i64 %lo, i64 %hi) nounwind {
entry:
  %l.maxv = alloca [1 x float], align 64
  %l.sumv = alloca [1 x float], align 64
  ; stage softmax1
  br label %i0.head1
i0.head1:
  %i0.5 = phi i64 [ 0, %entry ], [ %n6, %i0.latch3 ]
  %t7 = icmp slt i64 %i0.5, 64
  br i1 %t7, label %i0.body2, label %i0.exit4
i0.body2:
  store float 0xFFF0000000000000, ptr %l.maxv, align 4
  br label %j.head8
j.head8:
  %j.12 = phi i64 [ 0, %i0.body2 ], [ %n13, %j.latch10 ]
  %t14 = icmp slt i64 %j.12, 1000
  br i1 %t14, label %j.body9, label %j.exit11
j.body9:
  %v15 = load float, ptr %l.maxv, align 4
  %t16 = mul i64 %i0.5, 1000
  %t17 = add i64 %t16, %j.12
  %p18 = getelementptr inbounds float, ptr %param.1, i64 %t17
  %v19 = load float, ptr %p18, align 4
  %t20 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v15, float %v19)
  store float %t20, ptr %l.maxv, align 4
  br label %j.latch10
j.latch10:
  %n13 = add nuw nsw i64 %j.12, 1
  br label %j.head8, !llvm.loop !0
j.exit11:
  store float 0x0000000000000000, ptr %l.sumv, align 4
  br label %j_1.head21
j_1.head21:
  %j_1.25 = phi i64 [ 0, %j.exit11 ], [ %n26, %j_1.latch23 ]
  %t27 = icmp slt i64 %j_1.25, 1000
  br i1 %t27, label %j_1.body22, label %j_1.exit24
j_1.body22:
  %t28 = mul i64 %i0.5, 1000
  %t29 = add i64 %t28, %j_1.25
  %p30 = getelementptr inbounds float, ptr %param.1, i64 %t29
  %v31 = load float, ptr %p30, align 4
  %v32 = load float, ptr %l.maxv, align 4
  %t33 = fsub nsz contract arcp afn float %v31, %v32
  %c34 = call nsz contract arcp afn float @eqsat_exp(float %t33)
  %t35 = mul i64 %i0.5, 1000
  %t36 = add i64 %t35, %j_1.25
  %p37 = getelementptr inbounds float, ptr %param.0, i64 %t36
  store float %c34, ptr %p37, align 4
  %v38 = load float, ptr %l.sumv, align 4
  %t39 = mul i64 %i0.5, 1000
  %t40 = add i64 %t39, %j_1.25
  %p41 = getelementptr inbounds float, ptr %param.0, i64 %t40
  %v42 = load float, ptr %p41, align 4
  %t43 = fadd reassoc nsz contract arcp afn float %v38, %v42
  store float %t43, ptr %l.sumv, align 4
  br label %j_1.latch23
j_1.latch23:
  %n26 = add nuw nsw i64 %j_1.25, 1
  br label %j_1.head21, !llvm.loop !3
j_1.exit24:
  %v44 = load float, ptr %l.sumv, align 4
  %t45 = fdiv nsz contract arcp afn float 0x3FF0000000000000, %v44
  store float %t45, ptr %l.sumv, align 4
  br label %j_2.head46
j_2.head46:
  %j_2.50 = phi i64 [ 0, %j_1.exit24 ], [ %n51, %j_2.latch48 ]
  %t52 = icmp slt i64 %j_2.50, 1000
  br i1 %t52, label %j_2.body47, label %j_2.exit49
j_2.body47:
  %t53 = mul i64 %i0.5, 1000
  %t54 = add i64 %t53, %j_2.50
  %p55 = getelementptr inbounds float, ptr %param.0, i64 %t54
  %v56 = load float, ptr %p55, align 4
  %v57 = load float, ptr %l.sumv, align 4
  %t58 = fmul reassoc nsz contract arcp afn float %v56, %v57
  %t59 = mul i64 %i0.5, 1000
  %t60 = add i64 %t59, %j_2.50
  %p61 = getelementptr inbounds float, ptr %param.0, i64 %t60
  store float %t58, ptr %p61, align 4
  br label %j_2.latch48
j_2.latch48:
  %n51 = add nuw nsw i64 %j_2.50, 1
  br label %j_2.head46, !llvm.loop !6
j_2.exit49:
  br label %i0.latch3
i0.latch3:
  %n6 = add nuw nsw i64 %i0.5, 1
  br label %i0.head1, !llvm.loop !9
i0.exit4:
  ret void
}

define void @softmax(ptr %args, i64 %lo, i64 %hi) nounwind {
entry:
  %g0 = getelementptr ptr, ptr %args, i64 0
  %a0 = load ptr, ptr %g0, align 8
  %g1 = getelementptr ptr, ptr %args, i64 1
  %a1 = load ptr, ptr %g1, align 8
  call void @softmax.body(ptr %a0, ptr %a1, i64 %lo, i64 %hi)
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
