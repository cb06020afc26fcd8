declare i64 @llvm.smin.i64(i64, i64)

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
  br label %i0_o.head1
i0_o.head1:
  %i0_o.5 = phi i64 [ %lo, %entry ], [ %n6, %i0_o.latch3 ]
  %t7 = icmp slt i64 %i0_o.5, %hi
  br i1 %t7, label %i0_o.body2, label %i0_o.exit4
i0_o.body2:
  %t8 = mul i64 %i0_o.5, 9
  %t9 = sub i64 64, %t8
  %t10 = call i64 @llvm.smin.i64(i64 9, i64 %t9)
  br label %i0_i.head11
i0_i.head11:
  %i0_i.15 = phi i64 [ 0, %i0_o.body2 ], [ %n16, %i0_i.latch13 ]
  %t17 = icmp slt i64 %i0_i.15, %t10
  br i1 %t17, label %i0_i.body12, label %i0_i.exit14
i0_i.body12:
  store float 0xFFF0000000000000, ptr %l.maxv, align 4
  br label %j.head18
j.head18:
  %j.22 = phi i64 [ 0, %i0_i.body12 ], [ %n23, %j.latch20 ]
  %t24 = icmp slt i64 %j.22, 1000
  br i1 %t24, label %j.body19, label %j.exit21
j.body19:
  %v25 = load float, ptr %l.maxv, align 4
  %t26 = mul i64 %i0_i.15, 1000
  %t27 = mul i64 %i0_o.5, 9000
  %t28 = add i64 %t26, %t27
  %t29 = add i64 %t28, %j.22
  %p30 = getelementptr inbounds float, ptr %param.1, i64 %t29
  %v31 = load float, ptr %p30, align 4
  %t32 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v25, float %v31)
  store float %t32, ptr %l.maxv, align 4
  br label %j.latch20
j.latch20:
  %n23 = add nuw nsw i64 %j.22, 1
  br label %j.head18, !llvm.loop !0
j.exit21:
  store float 0x0000000000000000, ptr %l.sumv, align 4
  br label %j_1.head33
j_1.head33:
  %j_1.37 = phi i64 [ 0, %j.exit21 ], [ %n38, %j_1.latch35 ]
  %t39 = icmp slt i64 %j_1.37, 1000
  br i1 %t39, label %j_1.body34, label %j_1.exit36
j_1.body34:
  %t40 = mul i64 %i0_i.15, 1000
  %t41 = mul i64 %i0_o.5, 9000
  %t42 = add i64 %t40, %t41
  %t43 = add i64 %t42, %j_1.37
  %p44 = getelementptr inbounds float, ptr %param.1, i64 %t43
  %v45 = load float, ptr %p44, align 4
  %v46 = load float, ptr %l.maxv, align 4
  %t47 = fsub nsz contract arcp afn float %v45, %v46
  %c48 = call nsz contract arcp afn float @eqsat_exp(float %t47)
  %t49 = mul i64 %i0_i.15, 1000
  %t50 = mul i64 %i0_o.5, 9000
  %t51 = add i64 %t49, %t50
  %t52 = add i64 %t51, %j_1.37
  %p53 = getelementptr inbounds float, ptr %param.0, i64 %t52
  store float %c48, ptr %p53, align 4
  %v54 = load float, ptr %l.sumv, align 4
  %t55 = mul i64 %i0_i.15, 1000
  %t56 = mul i64 %i0_o.5, 9000
  %t57 = add i64 %t55, %t56
  %t58 = add i64 %t57, %j_1.37
  %p59 = getelementptr inbounds float, ptr %param.0, i64 %t58
  %v60 = load float, ptr %p59, align 4
  %t61 = fadd reassoc nsz contract arcp afn float %v54, %v60
  store float %t61, ptr %l.sumv, align 4
  br label %j_1.latch35
j_1.latch35:
  %n38 = add nuw nsw i64 %j_1.37, 1
  br label %j_1.head33, !llvm.loop !3
j_1.exit36:
  %v62 = load float, ptr %l.sumv, align 4
  %t63 = fdiv nsz contract arcp afn float 0x3FF0000000000000, %v62
  store float %t63, ptr %l.sumv, align 4
  br label %j_2.head64
j_2.head64:
  %j_2.68 = phi i64 [ 0, %j_1.exit36 ], [ %n69, %j_2.latch66 ]
  %t70 = icmp slt i64 %j_2.68, 1000
  br i1 %t70, label %j_2.body65, label %j_2.exit67
j_2.body65:
  %t71 = mul i64 %i0_i.15, 1000
  %t72 = mul i64 %i0_o.5, 9000
  %t73 = add i64 %t71, %t72
  %t74 = add i64 %t73, %j_2.68
  %p75 = getelementptr inbounds float, ptr %param.0, i64 %t74
  %v76 = load float, ptr %p75, align 4
  %v77 = load float, ptr %l.sumv, align 4
  %t78 = fmul reassoc nsz contract arcp afn float %v76, %v77
  %t79 = mul i64 %i0_i.15, 1000
  %t80 = mul i64 %i0_o.5, 9000
  %t81 = add i64 %t79, %t80
  %t82 = add i64 %t81, %j_2.68
  %p83 = getelementptr inbounds float, ptr %param.0, i64 %t82
  store float %t78, ptr %p83, align 4
  br label %j_2.latch66
j_2.latch66:
  %n69 = add nuw nsw i64 %j_2.68, 1
  br label %j_2.head64, !llvm.loop !6
j_2.exit67:
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
