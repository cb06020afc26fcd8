declare i64 @llvm.smin.i64(i64, i64)

declare float @llvm.maximum.f32(float, float)

declare void @eqsat_gemmtz_8x32_pb(ptr, i64, ptr, ptr, i64, i64, i64, i64, i64)

define internal void @gemm_bias_relu.body(ptr noalias nocapture align 4 %param.0, ptr noalias nocapture align 4 %param.1, ptr noalias nocapture align 4 %param.2, ptr noalias nocapture align 4 %param.3, ptr noalias nocapture align 4 %param.4, i64 %lo, i64 %hi) nounwind {
entry:
  %l.t4_apanel = alloca [3072 x float], align 64
  ; stage matmul0
  br label %i_1_o_j_1_o.head1
i_1_o_j_1_o.head1:
  %i_1_o_j_1_o.5 = phi i64 [ %lo, %entry ], [ %n6, %i_1_o_j_1_o.latch3 ]
  %t7 = icmp slt i64 %i_1_o_j_1_o.5, %hi
  br i1 %t7, label %i_1_o_j_1_o.body2, label %i_1_o_j_1_o.exit4
i_1_o_j_1_o.body2:
  ; stage matmul0.pack_t4_apanel
  br label %i_1_i_o_p.head8
i_1_i_o_p.head8:
  %i_1_i_o_p.12 = phi i64 [ 0, %i_1_o_j_1_o.body2 ], [ %n13, %i_1_i_o_p.latch10 ]
  %t14 = icmp slt i64 %i_1_i_o_p.12, 4
  br i1 %t14, label %i_1_i_o_p.body9, label %i_1_i_o_p.exit11
i_1_i_o_p.body9:
  br label %k_i_p1.head15
k_i_p1.head15:
  %k_i_p1.19 = phi i64 [ 0, %i_1_i_o_p.body9 ], [ %n20, %k_i_p1.latch17 ]
  %t21 = icmp slt i64 %k_i_p1.19, 96
  br i1 %t21, label %k_i_p1.body16, label %k_i_p1.exit18
k_i_p1.body16:
  br label %i_1_i_i_p.head22
i_1_i_i_p.head22:
  %i_1_i_i_p.26 = phi i64 [ 0, %k_i_p1.body16 ], [ %n27, %i_1_i_i_p.latch24 ]
  %t28 = icmp slt i64 %i_1_i_i_p.26, 8
  br i1 %t28, label %i_1_i_i_p.body23, label %i_1_i_i_p.exit25
i_1_i_i_p.body23:
  %t29 = mul i64 %i_1_i_i_p.26, 96
  %t30 = mul i64 %i_1_i_o_p.12, 768
  %t31 = add i64 %t29, %t30
  %t32 = mul i64 %i_1_o_j_1_o.5, 3072
  %t33 = add i64 %t31, %t32
  %t34 = add i64 %t33, %k_i_p1.19
  %t35 = mul i64 0, 96
  %t36 = add i64 %t34, %t35
  %p37 = getelementptr inbounds float, ptr %param.2, i64 %t36
  %v38 = load float, ptr %p37, align 4
  %t39 = mul i64 %i_1_i_o_p.12, 768
  %t40 = add i64 %i_1_i_i_p.26, %t39
  %t41 = mul i64 %k_i_p1.19, 8
  %t42 = add i64 %t40, %t41
  %p43 = getelementptr inbounds float, ptr %l.t4_apanel, i64 %t42
  store float %v38, ptr %p43, align 4
  br label %i_1_i_i_p.latch24
i_1_i_i_p.latch24:
  %n27 = add nuw nsw i64 %i_1_i_i_p.26, 1
  br label %i_1_i_i_p.head22, !llvm.loop !0
i_1_i_i_p.exit25:
  br label %k_i_p1.latch17
k_i_p1.latch17:
  %n20 = add nuw nsw i64 %k_i_p1.19, 1
  br label %k_i_p1.head15, !llvm.loop !3
k_i_p1.exit18:
  br label %i_1_i_o_p.latch10
i_1_i_o_p.latch10:
  %n13 = add nuw nsw i64 %i_1_i_o_p.12, 1
  br label %i_1_i_o_p.head8, !llvm.loop !5
i_1_i_o_p.exit11:
  br label %i_1_i_o.head44
i_1_i_o.head44:
  %i_1_i_o.48 = phi i64 [ 0, %i_1_i_o_p.exit11 ], [ %n49, %i_1_i_o.latch46 ]
  %t50 = icmp slt i64 %i_1_i_o.48, 4
  br i1 %t50, label %i_1_i_o.body45, label %i_1_i_o.exit47
i_1_i_o.body45:
  br label %j_1_i_o.head51
j_1_i_o.head51:
  %j_1_i_o.55 = phi i64 [ 0, %i_1_i_o.body45 ], [ %n56, %j_1_i_o.latch53 ]
  %t57 = icmp slt i64 %j_1_i_o.55, 3
  br i1 %t57, label %j_1_i_o.body52, label %j_1_i_o.exit54
j_1_i_o.body52:
  %t58 = mul i64 %i_1_i_o.48, 768
  %p59 = getelementptr inbounds float, ptr %l.t4_apanel, i64 %t58
  %t60 = mul i64 %j_1_i_o.55, 3072
  %t61 = mul i64 0, 3072
  %t62 = add i64 %t60, %t61
  %p63 = getelementptr inbounds float, ptr %param.4, i64 %t62
  %t64 = mul i64 %i_1_i_o.48, 640
  %t65 = mul i64 %i_1_o_j_1_o.5, 2560
  %t66 = add i64 %t64, %t65
  %t67 = mul i64 %j_1_i_o.55, 32
  %t68 = add i64 %t66, %t67
  %p69 = getelementptr inbounds float, ptr %param.0, i64 %t68
  %t70 = mul i64 %j_1_i_o.55, 32
  %t71 = sub i64 80, %t70
  %t72 = call i64 @llvm.smin.i64(i64 32, i64 %t71)
  %t73 = mul i64 0, 96
  call void @eqsat_gemmtz_8x32_pb(ptr %p59, i64 8, ptr %p63, ptr %p69, i64 80, i64 96, i64 8, i64 %t72, i64 %t73)
  br label %j_1_i_o.latch53
j_1_i_o.latch53:
  %n56 = add nuw nsw i64 %j_1_i_o.55, 1
  br label %j_1_i_o.head51
j_1_i_o.exit54:
  br label %i_1_i_o.latch46
i_1_i_o.latch46:
  %n49 = add nuw nsw i64 %i_1_i_o.48, 1
  br label %i_1_i_o.head44, !llvm.loop !7
i_1_i_o.exit47:
  ; stage matmul0.epilogue
  br label %ie_i.head74
ie_i.head74:
  %ie_i.78 = phi i64 [ 0, %i_1_i_o.exit47 ], [ %n79, %ie_i.latch76 ]
  %t80 = icmp slt i64 %ie_i.78, 32
  br i1 %t80, label %ie_i.body75, label %ie_i.exit77
ie_i.body75:
  br label %je_i.head81
je_i.head81:
  %je_i.85 = phi i64 [ 0, %ie_i.body75 ], [ %n86, %je_i.latch83 ]
  %t87 = icmp slt i64 %je_i.85, 80
  br i1 %t87, label %je_i.body82, label %je_i.exit84
je_i.body82:
  %t88 = mul i64 %i_1_o_j_1_o.5, 2560
  %t89 = mul i64 %ie_i.78, 80
  %t90 = add i64 %t88, %t89
  %t91 = add i64 %t90, %je_i.85
  %p92 = getelementptr inbounds float, ptr %param.0, i64 %t91
  %v93 = load float, ptr %p92, align 4
  %p94 = getelementptr inbounds float, ptr %param.1, i64 %je_i.85
  %v95 = load float, ptr %p94, align 4
  %t96 = fadd nsz contract arcp afn float %v93, %v95
  %t97 = call nsz contract arcp afn float @llvm.maximum.f32(float %t96, float 0x0000000000000000)
  %t98 = mul i64 %i_1_o_j_1_o.5, 2560
  %t99 = mul i64 %ie_i.78, 80
  %t100 = add i64 %t98, %t99
  %t101 = add i64 %t100, %je_i.85
  %p102 = getelementptr inbounds float, ptr %param.0, i64 %t101
  store float %t97, ptr %p102, align 4
  br label %je_i.latch83
je_i.latch83:
  %n86 = add nuw nsw i64 %je_i.85, 1
  br label %je_i.head81, !llvm.loop !9
je_i.exit84:
  br label %ie_i.latch76
ie_i.latch76:
  %n79 = add nuw nsw i64 %ie_i.78, 1
  br label %ie_i.head74, !llvm.loop !12
ie_i.exit77:
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

!0 = distinct !{!0, !1, !2}

!1 = !{!"llvm.loop.vectorize.enable", i1 true}

!2 = !{!"llvm.loop.vectorize.width", i32 16}

!3 = distinct !{!3, !4}

!4 = !{!"llvm.loop.unroll.disable"}

!5 = distinct !{!5, !6}

!6 = !{!"llvm.loop.unroll.disable"}

!7 = distinct !{!7, !8}

!8 = !{!"llvm.loop.unroll.disable"}

!9 = distinct !{!9, !10, !11}

!10 = !{!"llvm.loop.vectorize.enable", i1 true}

!11 = !{!"llvm.loop.vectorize.width", i32 16}

!12 = distinct !{!12, !13, !14}

!13 = !{!"llvm.loop.unroll.disable"}

!14 = !{!"llvm.loop.vectorize.enable", i1 false}
