declare float @llvm.maximum.f32(float, float)

declare float @llvm.rint.f32(float)

declare float @llvm.fma.f32(float, float, float)

define internal float @eqsat_exp(float %xin) alwaysinline nounwind {
  %small = fcmp olt float %xin, 0xC059FE3540000000
  %x = select i1 %small, float 0.0, float %xin
  %clo = fcmp olt float %x, 0xC05A000000000000
  %lo = select i1 %clo, float 0xC05A000000000000, float %x
  %chi = fcmp ogt float %lo, 0x4056300000000000
  %xc = select i1 %chi, float 0x4056300000000000, float %lo
  %t = fmul reassoc nsz contract arcp afn float %xc, 0x3FF7154760000000
  %n = call reassoc nsz contract arcp afn float @llvm.rint.f32(float %t)
  %r2 = call float @llvm.fma.f32(float %n, float 0xBFE6300000000000, float %xc)
  %r = call float @llvm.fma.f32(float %n, float 0x3F2BD01060000000, float %r2)
  %p0 = call float @llvm.fma.f32(float %r, float 0x3F2A0D2CE0000000, float 0x3F56E879C0000000)
  %p1 = call float @llvm.fma.f32(float %p0, float %r, float 0x3F81112100000000)
  %p2 = call float @llvm.fma.f32(float %p1, float %r, float 0x3FA5553820000000)
  %p3 = call float @llvm.fma.f32(float %p2, float %r, float 0x3FC5555540000000)
  %p9 = call float @llvm.fma.f32(float %p3, float %r, float 0x3FE0000000000000)
  %rr = fmul reassoc nsz contract arcp afn float %r, %r
  %q1 = call float @llvm.fma.f32(float %p9, float %rr, float %r)
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
  %big = fcmp ogt float %xin, 0x40562E42E0000000
  %y1 = select i1 %big, float 0x7FF0000000000000, float %y
  %y2 = select i1 %small, float 0.0, float %y1
  ret float %y2
}

define internal void @softmax.body(ptr noalias nocapture align 4 %param.0, ptr noalias nocapture align 4 %param.1, i64 %lo, i64 %hi) nounwind {
entry:
  %l.maxv = alloca [1 x float], align 64
  %l.sumv = alloca [1 x float], align 64
  ; stage softmax0
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
  store float 0xFFF0000000000000, ptr %l.maxv, align 4
  br label %j.head15
j.head15:
  %j.19 = phi i64 [ 0, %i0_i.body9 ], [ %n20, %j.latch17 ]
  %t21 = icmp slt i64 %j.19, 1000
  br i1 %t21, label %j.body16, label %j.exit18
j.body16:
  %v22 = load float, ptr %l.maxv, align 4
  %t23 = mul i64 %i0_i.12, 1000
  %t24 = mul i64 %i0_o.5, 4000
  %t25 = add i64 %t23, %t24
  %t26 = add i64 %t25, %j.19
  %p27 = getelementptr inbounds float, ptr %param.1, i64 %t26
  %v28 = load float, ptr %p27, align 4
  %t29 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v22, float %v28)
  store float %t29, ptr %l.maxv, align 4
  br label %j.latch17
j.latch17:
  %n20 = add nuw nsw i64 %j.19, 1
  br label %j.head15, !llvm.loop !0
j.exit18:
  store float 0x0000000000000000, ptr %l.sumv, align 4
  br label %j_1.head30
j_1.head30:
  %j_1.34 = phi i64 [ 0, %j.exit18 ], [ %n35, %j_1.latch32 ]
  %t36 = icmp slt i64 %j_1.34, 1000
  br i1 %t36, label %j_1.body31, label %j_1.exit33
j_1.body31:
  %t37 = mul i64 %i0_i.12, 1000
  %t38 = mul i64 %i0_o.5, 4000
  %t39 = add i64 %t37, %t38
  %t40 = add i64 %t39, %j_1.34
  %p41 = getelementptr inbounds float, ptr %param.1, i64 %t40
  %v42 = load float, ptr %p41, align 4
  %v43 = load float, ptr %l.maxv, align 4
  %t44 = fsub nsz contract arcp afn float %v42, %v43
  %c45 = call nsz contract arcp afn float @eqsat_exp(float %t44)
  %p46 = getelementptr inbounds float, ptr %param.0, i64 %t40
  store float %c45, ptr %p46, align 4
  %v47 = load float, ptr %l.sumv, align 4
  %v48 = load float, ptr %p46, align 4
  %t49 = fadd reassoc nsz contract arcp afn float %v47, %v48
  store float %t49, ptr %l.sumv, align 4
  br label %j_1.latch32
j_1.latch32:
  %n35 = add nuw nsw i64 %j_1.34, 1
  br label %j_1.head30, !llvm.loop !3
j_1.exit33:
  %v50 = load float, ptr %l.sumv, align 4
  %t51 = fdiv nsz float 0x3FF0000000000000, %v50
  store float %t51, ptr %l.sumv, align 4
  br label %j_2.head52
j_2.head52:
  %j_2.56 = phi i64 [ 0, %j_1.exit33 ], [ %n57, %j_2.latch54 ]
  %t58 = icmp slt i64 %j_2.56, 1000
  br i1 %t58, label %j_2.body53, label %j_2.exit55
j_2.body53:
  %t59 = mul i64 %i0_i.12, 1000
  %t60 = mul i64 %i0_o.5, 4000
  %t61 = add i64 %t59, %t60
  %t62 = add i64 %t61, %j_2.56
  %p63 = getelementptr inbounds float, ptr %param.0, i64 %t62
  %v64 = load float, ptr %p63, align 4
  %v65 = load float, ptr %l.sumv, align 4
  %t66 = fmul reassoc nsz contract arcp afn float %v64, %v65
  store float %t66, ptr %p63, align 4
  br label %j_2.latch54
j_2.latch54:
  %n57 = add nuw nsw i64 %j_2.56, 1
  br label %j_2.head52, !llvm.loop !6
j_2.exit55:
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

!9 = distinct !{!9, !10, !11}

!10 = !{!"llvm.loop.unroll.disable"}

!11 = !{!"llvm.loop.vectorize.enable", i1 false}
