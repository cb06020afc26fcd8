declare float @llvm.maximum.f32(float, float)

define internal void @fused_elementwise.body(ptr noalias nocapture align 4 %param.0, ptr noalias nocapture align 4 %param.1, ptr noalias nocapture align 4 %param.2, ptr noalias nocapture align 4 %param.3, i64 %lo, i64 %hi) nounwind {
entry:
  ; stage relu2
  br label %i0_2.head1
i0_2.head1:
  %i0_2.5 = phi i64 [ 0, %entry ], [ %n6, %i0_2.latch3 ]
  %t7 = icmp slt i64 %i0_2.5, 4096
  br i1 %t7, label %i0_2.body2, label %i0_2.exit4
i0_2.body2:
  %p8 = getelementptr inbounds float, ptr %param.1, i64 %i0_2.5
  %v9 = load float, ptr %p8, align 4
  %p10 = getelementptr inbounds float, ptr %param.2, i64 %i0_2.5
  %v11 = load float, ptr %p10, align 4
  %t12 = fmul nsz contract arcp afn float %v9, %v11
  %p13 = getelementptr inbounds float, ptr %param.3, i64 %i0_2.5
  %v14 = load float, ptr %p13, align 4
  %t15 = fadd nsz contract arcp afn float %t12, %v14
  %t16 = call nsz contract arcp afn float @llvm.maximum.f32(float %t15, float 0x0000000000000000)
  %p17 = getelementptr inbounds float, ptr %param.0, i64 %i0_2.5
  store float %t16, ptr %p17, align 4
  br label %i0_2.latch3
i0_2.latch3:
  %n6 = add nuw nsw i64 %i0_2.5, 1
  br label %i0_2.head1, !llvm.loop !0
i0_2.exit4:
  ret void
}

define void @fused_elementwise(ptr %args, i64 %lo, i64 %hi) nounwind {
entry:
  %g0 = getelementptr ptr, ptr %args, i64 0
  %a0 = load ptr, ptr %g0, align 8
  %g1 = getelementptr ptr, ptr %args, i64 1
  %a1 = load ptr, ptr %g1, align 8
  %g2 = getelementptr ptr, ptr %args, i64 2
  %a2 = load ptr, ptr %g2, align 8
  %g3 = getelementptr ptr, ptr %args, i64 3
  %a3 = load ptr, ptr %g3, align 8
  call void @fused_elementwise.body(ptr %a0, ptr %a1, ptr %a2, ptr %a3, i64 %lo, i64 %hi)
  ret void
}

!0 = distinct !{!0, !1, !2}

!1 = !{!"llvm.loop.vectorize.enable", i1 true}

!2 = !{!"llvm.loop.vectorize.width", i32 16}
