declare i64 @llvm.smin.i64(i64, i64)

declare float @llvm.maximum.f32(float, float)

declare void @eqsat_gemmt_8x32_pb(ptr, i64, ptr, ptr, i64, i64, i64, i64)

define internal void @gemm_bias_relu.body(ptr noalias nocapture align 4 %param.0, ptr noalias nocapture align 4 %param.1, ptr noalias nocapture align 4 %param.2, ptr noalias nocapture align 4 %param.3, ptr noalias nocapture align 4 %param.4, i64 %lo, i64 %hi) nounwind {
entry:
  %l.i_x_apanel = alloca [3072 x float], align 64
  ; stage matmul2
  br label %i_1_o_j_1_o.head1
i_1_o_j_1_o.head1:
  %i_1_o_j_1_o.5 = phi i64 [ 0, %entry ], [ %n6, %i_1_o_j_1_o.latch3 ]
  %t7 = icmp slt i64 %i_1_o_j_1_o.5, 2
  br i1 %t7, label %i_1_o_j_1_o.body2, label %i_1_o_j_1_o.exit4
i_1_o_j_1_o.body2:
  ; stage matmul2.init
  br label %i_i.head8
i_i.head8:
  %i_i.12 = phi i64 [ 0, %i_1_o_j_1_o.body2 ], [ %n13, %i_i.latch10 ]
  %t14 = icmp slt i64 %i_i.12, 32
  br i1 %t14, label %i_i.body9, label %i_i.exit11
i_i.body9:
  br label %j_i.head15
j_i.head15:
  %j_i.19 = phi i64 [ 0, %i_i.body9 ], [ %n20, %j_i.latch17 ]
  %t21 = icmp slt i64 %j_i.19, 80
  br i1 %t21, label %j_i.body16, label %j_i.exit18
j_i.body16:
  %p22 = getelementptr inbounds float, ptr %param.1, i64 %j_i.19
  %v23 = load float, ptr %p22, align 4
  %t24 = mul i64 %i_i.12, 80
  %t25 = mul i64 %i_1_o_j_1_o.5, 2560
  %t26 = add i64 %t24, %t25
  %t27 = add i64 %t26, %j_i.19
  %p28 = getelementptr inbounds float, ptr %param.0, i64 %t27
  store float %v23, ptr %p28, align 4
  br label %j_i.latch17
j_i.latch17:
  %n20 = add nuw nsw i64 %j_i.19, 1
  br label %j_i.head15, !llvm.loop !0
j_i.exit18:
  br label %i_i.latch10
i_i.latch10:
  %n13 = add nuw nsw i64 %i_i.12, 1
  br label %i_i.head8, !llvm.loop !3
i_i.exit11:
  ; stage matmul2.pack_i_x_apanel
  br label %i_1_i_o_p.head29
i_1_i_o_p.head29:
  %i_1_i_o_p.33 = phi i64 [ 0, %i_i.exit11 ], [ %n34, %i_1_i_o_p.latch31 ]
  %t35 = icmp slt i64 %i_1_i_o_p.33, 4
  br i1 %t35, label %i_1_i_o_p.body30, label %i_1_i_o_p.exit32
i_1_i_o_p.body30:
  br label %k_i_p1.head36
k_i_p1.head36:
  %k_i_p1.40 = phi i64 [ 0, %i_1_i_o_p.body30 ], [ %n41, %k_i_p1.latch38 ]
  %t42 = icmp slt i64 %k_i_p1.40, 96
  br i1 %t42, label %k_i_p1.body37, label %k_i_p1.exit39
k_i_p1.body37:
  br label %i_1_i_i_p.head43
i_1_i_i_p.head43:
  %i_1_i_i_p.47 = phi i64 [ 0, %k_i_p1.body37 ], [ %n48, %i_1_i_i_p.latch45 ]
  %t49 = icmp slt i64 %i_1_i_i_p.47, 8
  br i1 %t49, label %i_1_i_i_p.body44, label %i_1_i_i_p.exit46
i_1_i_i_p.body44:
  %t50 = mul i64 %i_1_i_i_p.47, 96
  %t51 = mul i64 %i_1_i_o_p.33, 768
  %t52 = add i64 %t50, %t51
  %t53 = mul i64 %i_1_o_j_1_o.5, 3072
  %t54 = add i64 %t52, %t53
  %t55 = add i64 %t54, %k_i_p1.40
  %t56 = mul i64 0, 96
  %t57 = add i64 %t55, %t56
  %p58 = getelementptr inbounds float, ptr %param.2, i64 %t57
  %v59 = load float, ptr %p58, align 4
  %t60 = mul i64 %i_1_i_o_p.33, 768
  %t61 = add i64 %i_1_i_i_p.47, %t60
  %t62 = mul i64 %k_i_p1.40, 8
  %t63 = add i64 %t61, %t62
  %p64 = getelementptr inbounds float, ptr %l.i_x_apanel, i64 %t63
  store float %v59, ptr %p64, align 4
  br label %i_1_i_i_p.latch45
i_1_i_i_p.latch45:
  %n48 = add nuw nsw i64 %i_1_i_i_p.47, 1
  br label %i_1_i_i_p.head43, !llvm.loop !6
i_1_i_i_p.exit46:
  br label %k_i_p1.latch38
k_i_p1.latch38:
  %n41 = add nuw nsw i64 %k_i_p1.40, 1
  br label %k_i_p1.head36, !llvm.loop !9
k_i_p1.exit39:
  br label %i_1_i_o_p.latch31
i_1_i_o_p.latch31:
  %n34 = add nuw nsw i64 %i_1_i_o_p.33, 1
  br label %i_1_i_o_p.head29, !llvm.loop !11
i_1_i_o_p.exit32:
  br label %i_1_i_o.head65
i_1_i_o.head65:
  %i_1_i_o.69 = phi i64 [ 0, %i_1_i_o_p.exit32 ], [ %n70, %i_1_i_o.latch67 ]
  %t71 = icmp slt i64 %i_1_i_o.69, 4
  br i1 %t71, label %i_1_i_o.body66, label %i_1_i_o.exit68
i_1_i_o.body66:
  br label %j_1_i_o.head72
j_1_i_o.head72:
  %j_1_i_o.76 = phi i64 [ 0, %i_1_i_o.body66 ], [ %n77, %j_1_i_o.latch74 ]
  %t78 = icmp slt i64 %j_1_i_o.76, 3
  br i1 %t78, label %j_1_i_o.body73, label %j_1_i_o.exit75
j_1_i_o.body73:
  %t79 = mul i64 %i_1_i_o.69, 768
  %p80 = getelementptr inbounds float, ptr %l.i_x_apanel, i64 %t79
  %t81 = mul i64 %j_1_i_o.76, 3072
  %t82 = mul i64 0, 3072
  %t83 = add i64 %t81, %t82
  %p84 = getelementptr inbounds float, ptr %param.4, i64 %t83
  %t85 = mul i64 %i_1_i_o.69, 640
  %t86 = mul i64 %i_1_o_j_1_o.5, 2560
  %t87 = add i64 %t85, %t86
  %t88 = mul i64 %j_1_i_o.76, 32
  %t89 = add i64 %t87, %t88
  %p90 = getelementptr inbounds float, ptr %param.0, i64 %t89
  %t91 = mul i64 %j_1_i_o.76, 32
  %t92 = sub i64 80, %t91
  %t93 = call i64 @llvm.smin.i64(i64 32, i64 %t92)
  call void @eqsat_gemmt_8x32_pb(ptr %p80, i64 8, ptr %p84, ptr %p90, i64 80, i64 96, i64 8, i64 %t93)
  br label %j_1_i_o.latch74
j_1_i_o.latch74:
  %n77 = add nuw nsw i64 %j_1_i_o.76, 1
  br label %j_1_i_o.head72
j_1_i_o.exit75:
  br label %i_1_i_o.latch67
i_1_i_o.latch67:
  %n70 = add nuw nsw i64 %i_1_i_o.69, 1
  br label %i_1_i_o.head65, !llvm.loop !13
i_1_i_o.exit68:
  ; stage matmul2.epilogue
  br label %ie_i.head94
ie_i.head94:
  %ie_i.98 = phi i64 [ 0, %i_1_i_o.exit68 ], [ %n99, %ie_i.latch96 ]
  %t100 = icmp slt i64 %ie_i.98, 32
  br i1 %t100, label %ie_i.body95, label %ie_i.exit97
ie_i.body95:
  br label %je_i.head101
je_i.head101:
  %je_i.105 = phi i64 [ 0, %ie_i.body95 ], [ %n106, %je_i.latch103 ]
  %t107 = icmp slt i64 %je_i.105, 80
  br i1 %t107, label %je_i.body102, label %je_i.exit104
je_i.body102:
  %t108 = mul i64 %i_1_o_j_1_o.5, 2560
  %t109 = mul i64 %ie_i.98, 80
  %t110 = add i64 %t108, %t109
  %t111 = add i64 %t110, %je_i.105
  %p112 = getelementptr inbounds float, ptr %param.0, i64 %t111
  %v113 = load float, ptr %p112, align 4
  %t114 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v113, float 0x0000000000000000)
  %t115 = mul i64 %i_1_o_j_1_o.5, 2560
  %t116 = mul i64 %ie_i.98, 80
  %t117 = add i64 %t115, %t116
  %t118 = add i64 %t117, %je_i.105
  %p119 = getelementptr inbounds float, ptr %param.0, i64 %t118
  store float %t114, ptr %p119, align 4
  br label %je_i.latch103
je_i.latch103:
  %n106 = add nuw nsw i64 %je_i.105, 1
  br label %je_i.head101, !llvm.loop !15
je_i.exit104:
  br label %ie_i.latch96
ie_i.latch96:
  %n99 = add nuw nsw i64 %ie_i.98, 1
  br label %ie_i.head94, !llvm.loop !18
ie_i.exit97:
  br label %i_1_o_j_1_o.latch3
i_1_o_j_1_o.latch3:
  %n6 = add nuw nsw i64 %i_1_o_j_1_o.5, 1
  br label %i_1_o_j_1_o.head1, !llvm.loop !21
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

!3 = distinct !{!3, !4, !5}

!4 = !{!"llvm.loop.unroll.disable"}

!5 = !{!"llvm.loop.vectorize.enable", i1 false}

!6 = distinct !{!6, !7, !8}

!7 = !{!"llvm.loop.vectorize.enable", i1 true}

!8 = !{!"llvm.loop.vectorize.width", i32 16}

!9 = distinct !{!9, !10}

!10 = !{!"llvm.loop.unroll.disable"}

!11 = distinct !{!11, !12}

!12 = !{!"llvm.loop.unroll.disable"}

!13 = distinct !{!13, !14}

!14 = !{!"llvm.loop.unroll.disable"}

!15 = distinct !{!15, !16, !17}

!16 = !{!"llvm.loop.vectorize.enable", i1 true}

!17 = !{!"llvm.loop.vectorize.width", i32 16}

!18 = distinct !{!18, !19, !20}

!19 = !{!"llvm.loop.unroll.disable"}

!20 = !{!"llvm.loop.vectorize.enable", i1 false}

!21 = distinct !{!21, !22}

!22 = !{!"llvm.loop.unroll.disable"}
