declare i64 @llvm.smin.i64(i64, i64)

declare float @llvm.maximum.f32(float, float)

declare void @eqsat_gemmt_8x32(ptr, i64, ptr, ptr, i64, i64, i64, i64)

define internal void @gemm_bias_relu.body(ptr noalias nocapture align 4 %param.0, ptr noalias nocapture align 4 %param.1, ptr noalias nocapture align 4 %param.2, ptr noalias nocapture align 4 %param.3, ptr noalias nocapture align 4 %param.4, i64 %lo, i64 %hi) nounwind {
entry:
  %l.i_x_apanel = alloca [6144 x float], align 64
  ; stage matmul2
  br label %j_1_o.head1
j_1_o.head1:
  %j_1_o.5 = phi i64 [ 0, %entry ], [ %n6, %j_1_o.latch3 ]
  %t7 = icmp slt i64 %j_1_o.5, 3
  br i1 %t7, label %j_1_o.body2, label %j_1_o.exit4
j_1_o.body2:
  ; stage matmul2.init
  br label %i.head8
i.head8:
  %i.12 = phi i64 [ 0, %j_1_o.body2 ], [ %n13, %i.latch10 ]
  %t14 = icmp slt i64 %i.12, 64
  br i1 %t14, label %i.body9, label %i.exit11
i.body9:
  %t15 = mul i64 %j_1_o.5, 32
  %t16 = sub i64 80, %t15
  %t17 = call i64 @llvm.smin.i64(i64 32, i64 %t16)
  br label %j_i.head18
j_i.head18:
  %j_i.22 = phi i64 [ 0, %i.body9 ], [ %n23, %j_i.latch20 ]
  %t24 = icmp slt i64 %j_i.22, %t17
  br i1 %t24, label %j_i.body19, label %j_i.exit21
j_i.body19:
  %t25 = mul i64 %j_1_o.5, 32
  %t26 = add i64 %j_i.22, %t25
  %p27 = getelementptr inbounds float, ptr %param.1, i64 %t26
  %v28 = load float, ptr %p27, align 4
  %t29 = mul i64 %i.12, 80
  %t30 = add i64 %t29, %j_i.22
  %t31 = mul i64 %j_1_o.5, 32
  %t32 = add i64 %t30, %t31
  %p33 = getelementptr inbounds float, ptr %param.0, i64 %t32
  store float %v28, ptr %p33, align 4
  br label %j_i.latch20
j_i.latch20:
  %n23 = add nuw nsw i64 %j_i.22, 1
  br label %j_i.head18, !llvm.loop !0
j_i.exit21:
  br label %i.latch10
i.latch10:
  %n13 = add nuw nsw i64 %i.12, 1
  br label %i.head8, !llvm.loop !3
i.exit11:
  ; stage matmul2.pack_i_x_apanel
  br label %i_1_i_o_p.head34
i_1_i_o_p.head34:
  %i_1_i_o_p.38 = phi i64 [ 0, %i.exit11 ], [ %n39, %i_1_i_o_p.latch36 ]
  %t40 = icmp slt i64 %i_1_i_o_p.38, 8
  br i1 %t40, label %i_1_i_o_p.body35, label %i_1_i_o_p.exit37
i_1_i_o_p.body35:
  br label %k_i_p1.head41
k_i_p1.head41:
  %k_i_p1.45 = phi i64 [ 0, %i_1_i_o_p.body35 ], [ %n46, %k_i_p1.latch43 ]
  %t47 = icmp slt i64 %k_i_p1.45, 96
  br i1 %t47, label %k_i_p1.body42, label %k_i_p1.exit44
k_i_p1.body42:
  br label %i_1_i_i_p.head48
i_1_i_i_p.head48:
  %i_1_i_i_p.52 = phi i64 [ 0, %k_i_p1.body42 ], [ %n53, %i_1_i_i_p.latch50 ]
  %t54 = icmp slt i64 %i_1_i_i_p.52, 8
  br i1 %t54, label %i_1_i_i_p.body49, label %i_1_i_i_p.exit51
i_1_i_i_p.body49:
  %t55 = mul i64 %i_1_i_i_p.52, 96
  %t56 = mul i64 %i_1_i_o_p.38, 768
  %t57 = add i64 %t55, %t56
  %t58 = mul i64 0, 6144
  %t59 = add i64 %t57, %t58
  %t60 = add i64 %t59, %k_i_p1.45
  %t61 = mul i64 0, 96
  %t62 = add i64 %t60, %t61
  %p63 = getelementptr inbounds float, ptr %param.2, i64 %t62
  %v64 = load float, ptr %p63, align 4
  %t65 = mul i64 %i_1_i_o_p.38, 768
  %t66 = add i64 %i_1_i_i_p.52, %t65
  %t67 = mul i64 %k_i_p1.45, 8
  %t68 = add i64 %t66, %t67
  %p69 = getelementptr inbounds float, ptr %l.i_x_apanel, i64 %t68
  store float %v64, ptr %p69, align 4
  br label %i_1_i_i_p.latch50
i_1_i_i_p.latch50:
  %n53 = add nuw nsw i64 %i_1_i_i_p.52, 1
  br label %i_1_i_i_p.head48, !llvm.loop !5
i_1_i_i_p.exit51:
  br label %k_i_p1.latch43
k_i_p1.latch43:
  %n46 = add nuw nsw i64 %k_i_p1.45, 1
  br label %k_i_p1.head41, !llvm.loop !8
k_i_p1.exit44:
  br label %i_1_i_o_p.latch36
i_1_i_o_p.latch36:
  %n39 = add nuw nsw i64 %i_1_i_o_p.38, 1
  br label %i_1_i_o_p.head34, !llvm.loop !10
i_1_i_o_p.exit37:
  br label %i_1_i_o.head70
i_1_i_o.head70:
  %i_1_i_o.74 = phi i64 [ 0, %i_1_i_o_p.exit37 ], [ %n75, %i_1_i_o.latch72 ]
  %t76 = icmp slt i64 %i_1_i_o.74, 8
  br i1 %t76, label %i_1_i_o.body71, label %i_1_i_o.exit73
i_1_i_o.body71:
  %t77 = mul i64 %j_1_o.5, 32
  %t78 = sub i64 80, %t77
  %t79 = call i64 @llvm.smin.i64(i64 32, i64 %t78)
  %t80 = add i64 %t79, 31
  %q81 = sdiv i64 %t80, 32
  br label %j_1_i_o.head83
j_1_i_o.head83:
  %j_1_i_o.87 = phi i64 [ 0, %i_1_i_o.body71 ], [ %n88, %j_1_i_o.latch85 ]
  %t89 = icmp slt i64 %j_1_i_o.87, %q81
  br i1 %t89, label %j_1_i_o.body84, label %j_1_i_o.exit86
j_1_i_o.body84:
  %t90 = mul i64 %i_1_i_o.74, 768
  %p91 = getelementptr inbounds float, ptr %l.i_x_apanel, i64 %t90
  %t92 = mul i64 %j_1_i_o.87, 3072
  %t93 = mul i64 %j_1_o.5, 3072
  %t94 = add i64 %t92, %t93
  %t95 = mul i64 0, 3072
  %t96 = add i64 %t94, %t95
  %p97 = getelementptr inbounds float, ptr %param.4, i64 %t96
  %t98 = mul i64 %i_1_i_o.74, 640
  %t99 = mul i64 0, 5120
  %t100 = add i64 %t98, %t99
  %t101 = mul i64 %j_1_i_o.87, 32
  %t102 = add i64 %t100, %t101
  %t103 = mul i64 %j_1_o.5, 32
  %t104 = add i64 %t102, %t103
  %p105 = getelementptr inbounds float, ptr %param.0, i64 %t104
  %t106 = mul i64 %j_1_o.5, 32
  %t107 = sub i64 80, %t106
  %t108 = call i64 @llvm.smin.i64(i64 32, i64 %t107)
  %t109 = mul i64 %j_1_i_o.87, 32
  %t110 = sub i64 %t108, %t109
  call void @eqsat_gemmt_8x32(ptr %p91, i64 8, ptr %p97, ptr %p105, i64 80, i64 96, i64 8, i64 %t110)
  br label %j_1_i_o.latch85
j_1_i_o.latch85:
  %n88 = add nuw nsw i64 %j_1_i_o.87, 1
  br label %j_1_i_o.head83
j_1_i_o.exit86:
  br label %i_1_i_o.latch72
i_1_i_o.latch72:
  %n75 = add nuw nsw i64 %i_1_i_o.74, 1
  br label %i_1_i_o.head70, !llvm.loop !12
i_1_i_o.exit73:
  ; stage matmul2.epilogue
  br label %ie.head111
ie.head111:
  %ie.115 = phi i64 [ 0, %i_1_i_o.exit73 ], [ %n116, %ie.latch113 ]
  %t117 = icmp slt i64 %ie.115, 64
  br i1 %t117, label %ie.body112, label %ie.exit114
ie.body112:
  %t118 = mul i64 %j_1_o.5, 32
  %t119 = sub i64 80, %t118
  %t120 = call i64 @llvm.smin.i64(i64 32, i64 %t119)
  br label %je_i.head121
je_i.head121:
  %je_i.125 = phi i64 [ 0, %ie.body112 ], [ %n126, %je_i.latch123 ]
  %t127 = icmp slt i64 %je_i.125, %t120
  br i1 %t127, label %je_i.body122, label %je_i.exit124
je_i.body122:
  %t128 = mul i64 %ie.115, 80
  %t129 = mul i64 %j_1_o.5, 32
  %t130 = add i64 %t128, %t129
  %t131 = add i64 %t130, %je_i.125
  %p132 = getelementptr inbounds float, ptr %param.0, i64 %t131
  %v133 = load float, ptr %p132, align 4
  %t134 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v133, float 0x0000000000000000)
  %t135 = mul i64 %ie.115, 80
  %t136 = mul i64 %j_1_o.5, 32
  %t137 = add i64 %t135, %t136
  %t138 = add i64 %t137, %je_i.125
  %p139 = getelementptr inbounds float, ptr %param.0, i64 %t138
  store float %t134, ptr %p139, align 4
  br label %je_i.latch123
je_i.latch123:
  %n126 = add nuw nsw i64 %je_i.125, 1
  br label %je_i.head121, !llvm.loop !14
je_i.exit124:
  br label %ie.latch113
ie.latch113:
  %n116 = add nuw nsw i64 %ie.115, 1
  br label %ie.head111, !llvm.loop !17
ie.exit114:
  br label %j_1_o.latch3
j_1_o.latch3:
  %n6 = add nuw nsw i64 %j_1_o.5, 1
  br label %j_1_o.head1, !llvm.loop !19
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

!0 = distinct !{!0, !1, !2}

!1 = !{!"llvm.loop.vectorize.enable", i1 true}

!2 = !{!"llvm.loop.vectorize.width", i32 16}

!3 = distinct !{!3, !4}

!4 = !{!"llvm.loop.unroll.disable"}

!5 = distinct !{!5, !6, !7}

!6 = !{!"llvm.loop.vectorize.enable", i1 true}

!7 = !{!"llvm.loop.vectorize.width", i32 16}

!8 = distinct !{!8, !9}

!9 = !{!"llvm.loop.unroll.disable"}

!10 = distinct !{!10, !11}

!11 = !{!"llvm.loop.unroll.disable"}

!12 = distinct !{!12, !13}

!13 = !{!"llvm.loop.unroll.disable"}

!14 = distinct !{!14, !15, !16}

!15 = !{!"llvm.loop.vectorize.enable", i1 true}

!16 = !{!"llvm.loop.vectorize.width", i32 16}

!17 = distinct !{!17, !18}

!18 = !{!"llvm.loop.unroll.disable"}

!19 = distinct !{!19, !20}

!20 = !{!"llvm.loop.unroll.disable"}
