declare i64 @llvm.smin.i64(i64, i64)

declare float @llvm.maximum.f32(float, float)

declare void @eqsat_gemmtz_6x16_pb(ptr, i64, ptr, ptr, i64, i64, i64, i64, i64)

define internal void @gemm_bias_relu.body(ptr noalias nocapture align 4 %param.0, ptr noalias nocapture align 4 %param.1, ptr noalias nocapture align 4 %param.2, ptr noalias nocapture align 4 %param.3, ptr noalias nocapture align 4 %param.4, i64 %lo, i64 %hi) nounwind {
entry:
  %l.t4_apanel = alloca [6336 x float], align 64
  ; stage matmul0
  br label %j_1_o.head1
j_1_o.head1:
  %j_1_o.5 = phi i64 [ %lo, %entry ], [ %n6, %j_1_o.latch3 ]
  %t7 = icmp slt i64 %j_1_o.5, %hi
  br i1 %t7, label %j_1_o.body2, label %j_1_o.exit4
j_1_o.body2:
  ; stage matmul0.pack_t4_apanel
  %t8 = mul i64 0, 11
  %t9 = sub i64 11, %t8
  br label %i_1_i_o_p.head10
i_1_i_o_p.head10:
  %i_1_i_o_p.14 = phi i64 [ 0, %j_1_o.body2 ], [ %n15, %i_1_i_o_p.latch12 ]
  %t16 = icmp slt i64 %i_1_i_o_p.14, %t9
  br i1 %t16, label %i_1_i_o_p.body11, label %i_1_i_o_p.exit13
i_1_i_o_p.body11:
  %t17 = mul i64 %i_1_i_o_p.14, 6
  %t18 = sub i64 64, %t17
  %t19 = mul i64 0, 66
  %t20 = sub i64 %t18, %t19
  %t21 = call i64 @llvm.smin.i64(i64 6, i64 %t20)
  %t22 = icmp sge i64 %t21, 6
  br i1 %t22, label %then23, label %else24
then23:
  br label %k_i_p1.head26
k_i_p1.head26:
  %k_i_p1.30 = phi i64 [ 0, %then23 ], [ %n31, %k_i_p1.latch28 ]
  %t32 = icmp slt i64 %k_i_p1.30, 96
  br i1 %t32, label %k_i_p1.body27, label %k_i_p1.exit29
k_i_p1.body27:
  br label %i_1_i_i_p.head33
i_1_i_i_p.head33:
  %i_1_i_i_p.37 = phi i64 [ 0, %k_i_p1.body27 ], [ %n38, %i_1_i_i_p.latch35 ]
  %t39 = icmp slt i64 %i_1_i_i_p.37, 6
  br i1 %t39, label %i_1_i_i_p.body34, label %i_1_i_i_p.exit36
i_1_i_i_p.body34:
  %t40 = mul i64 %i_1_i_i_p.37, 96
  %t41 = mul i64 %i_1_i_o_p.14, 576
  %t42 = add i64 %t40, %t41
  %t43 = mul i64 0, 6336
  %t44 = add i64 %t42, %t43
  %t45 = add i64 %t44, %k_i_p1.30
  %t46 = mul i64 0, 96
  %t47 = add i64 %t45, %t46
  %p48 = getelementptr inbounds float, ptr %param.2, i64 %t47
  %v49 = load float, ptr %p48, align 4
  %t50 = mul i64 %i_1_i_o_p.14, 576
  %t51 = add i64 %i_1_i_i_p.37, %t50
  %t52 = mul i64 %k_i_p1.30, 6
  %t53 = add i64 %t51, %t52
  %p54 = getelementptr inbounds float, ptr %l.t4_apanel, i64 %t53
  store float %v49, ptr %p54, align 4
  br label %i_1_i_i_p.latch35
i_1_i_i_p.latch35:
  %n38 = add nuw nsw i64 %i_1_i_i_p.37, 1
  br label %i_1_i_i_p.head33, !llvm.loop !0
i_1_i_i_p.exit36:
  br label %k_i_p1.latch28
k_i_p1.latch28:
  %n31 = add nuw nsw i64 %k_i_p1.30, 1
  br label %k_i_p1.head26, !llvm.loop !3
k_i_p1.exit29:
  br label %endif25
else24:
  br label %k_i_p1.head55
k_i_p1.head55:
  %k_i_p1.59 = phi i64 [ 0, %else24 ], [ %n60, %k_i_p1.latch57 ]
  %t61 = icmp slt i64 %k_i_p1.59, 96
  br i1 %t61, label %k_i_p1.body56, label %k_i_p1.exit58
k_i_p1.body56:
  br label %i_1_i_i_p.head62
i_1_i_i_p.head62:
  %i_1_i_i_p.66 = phi i64 [ 0, %k_i_p1.body56 ], [ %n67, %i_1_i_i_p.latch64 ]
  %t68 = icmp slt i64 %i_1_i_i_p.66, 6
  br i1 %t68, label %i_1_i_i_p.body63, label %i_1_i_i_p.exit65
i_1_i_i_p.body63:
  %t69 = mul i64 %i_1_i_o_p.14, 6
  %t70 = sub i64 64, %t69
  %t71 = mul i64 0, 66
  %t72 = sub i64 %t70, %t71
  %t73 = call i64 @llvm.smin.i64(i64 6, i64 %t72)
  %t74 = icmp slt i64 %i_1_i_i_p.66, %t73
  br i1 %t74, label %sa75, label %sj77
sa75:
  %t78 = mul i64 %i_1_i_i_p.66, 96
  %t79 = mul i64 %i_1_i_o_p.14, 576
  %t80 = add i64 %t78, %t79
  %t81 = mul i64 0, 6336
  %t82 = add i64 %t80, %t81
  %t83 = add i64 %t82, %k_i_p1.59
  %t84 = mul i64 0, 96
  %t85 = add i64 %t83, %t84
  %p86 = getelementptr inbounds float, ptr %param.2, i64 %t85
  %v87 = load float, ptr %p86, align 4
  br label %sj77
sj77:
  %s88 = phi float [ %v87, %sa75 ], [ 0x0000000000000000, %i_1_i_i_p.body63 ]
  %t89 = mul i64 %i_1_i_o_p.14, 576
  %t90 = add i64 %i_1_i_i_p.66, %t89
  %t91 = mul i64 %k_i_p1.59, 6
  %t92 = add i64 %t90, %t91
  %p93 = getelementptr inbounds float, ptr %l.t4_apanel, i64 %t92
  store float %s88, ptr %p93, align 4
  br label %i_1_i_i_p.latch64
i_1_i_i_p.latch64:
  %n67 = add nuw nsw i64 %i_1_i_i_p.66, 1
  br label %i_1_i_i_p.head62, !llvm.loop !5
i_1_i_i_p.exit65:
  br label %k_i_p1.latch57
k_i_p1.latch57:
  %n60 = add nuw nsw i64 %k_i_p1.59, 1
  br label %k_i_p1.head55, !llvm.loop !8
k_i_p1.exit58:
  br label %endif25
endif25:
  br label %i_1_i_o_p.latch12
i_1_i_o_p.latch12:
  %n15 = add nuw nsw i64 %i_1_i_o_p.14, 1
  br label %i_1_i_o_p.head10, !llvm.loop !10
i_1_i_o_p.exit13:
  %t94 = mul i64 %j_1_o.5, 48
  %t95 = sub i64 80, %t94
  %t96 = call i64 @llvm.smin.i64(i64 48, i64 %t95)
  %t97 = add i64 %t96, 15
  %q98 = sdiv i64 %t97, 16
  br label %j_1_i_o.head100
j_1_i_o.head100:
  %j_1_i_o.104 = phi i64 [ 0, %i_1_i_o_p.exit13 ], [ %n105, %j_1_i_o.latch102 ]
  %t106 = icmp slt i64 %j_1_i_o.104, %q98
  br i1 %t106, label %j_1_i_o.body101, label %j_1_i_o.exit103
j_1_i_o.body101:
  %t107 = mul i64 0, 11
  %t108 = sub i64 11, %t107
  br label %i_1_i_o.head109
i_1_i_o.head109:
  %i_1_i_o.113 = phi i64 [ 0, %j_1_i_o.body101 ], [ %n114, %i_1_i_o.latch111 ]
  %t115 = icmp slt i64 %i_1_i_o.113, %t108
  br i1 %t115, label %i_1_i_o.body110, label %i_1_i_o.exit112
i_1_i_o.body110:
  %t116 = mul i64 %i_1_i_o.113, 576
  %p117 = getelementptr inbounds float, ptr %l.t4_apanel, i64 %t116
  %t118 = mul i64 %j_1_i_o.104, 1536
  %t119 = mul i64 %j_1_o.5, 4608
  %t120 = add i64 %t118, %t119
  %t121 = mul i64 0, 1536
  %t122 = add i64 %t120, %t121
  %p123 = getelementptr inbounds float, ptr %param.4, i64 %t122
  %t124 = mul i64 %i_1_i_o.113, 480
  %t125 = mul i64 0, 5280
  %t126 = add i64 %t124, %t125
  %t127 = mul i64 %j_1_i_o.104, 16
  %t128 = add i64 %t126, %t127
  %t129 = mul i64 %j_1_o.5, 48
  %t130 = add i64 %t128, %t129
  %p131 = getelementptr inbounds float, ptr %param.0, i64 %t130
  %t132 = mul i64 %i_1_i_o.113, 6
  %t133 = sub i64 64, %t132
  %t134 = mul i64 0, 66
  %t135 = sub i64 %t133, %t134
  %t136 = call i64 @llvm.smin.i64(i64 6, i64 %t135)
  %t137 = mul i64 %j_1_o.5, 48
  %t138 = sub i64 80, %t137
  %t139 = call i64 @llvm.smin.i64(i64 48, i64 %t138)
  %t140 = mul i64 %j_1_i_o.104, 16
  %t141 = sub i64 %t139, %t140
  %t142 = call i64 @llvm.smin.i64(i64 16, i64 %t141)
  %t143 = mul i64 0, 96
  call void @eqsat_gemmtz_6x16_pb(ptr %p117, i64 6, ptr %p123, ptr %p131, i64 80, i64 96, i64 %t136, i64 %t142, i64 %t143)
  br label %i_1_i_o.latch111
i_1_i_o.latch111:
  %n114 = add nuw nsw i64 %i_1_i_o.113, 1
  br label %i_1_i_o.head109
i_1_i_o.exit112:
  br label %j_1_i_o.latch102
j_1_i_o.latch102:
  %n105 = add nuw nsw i64 %j_1_i_o.104, 1
  br label %j_1_i_o.head100, !llvm.loop !12
j_1_i_o.exit103:
  ; stage matmul0.epilogue
  br label %ie.head144
ie.head144:
  %ie.148 = phi i64 [ 0, %j_1_i_o.exit103 ], [ %n149, %ie.latch146 ]
  %t150 = icmp slt i64 %ie.148, 64
  br i1 %t150, label %ie.body145, label %ie.exit147
ie.body145:
  %t151 = mul i64 %j_1_o.5, 48
  %t152 = sub i64 80, %t151
  %t153 = call i64 @llvm.smin.i64(i64 48, i64 %t152)
  br label %je_i.head154
je_i.head154:
  %je_i.158 = phi i64 [ 0, %ie.body145 ], [ %n159, %je_i.latch156 ]
  %t160 = icmp slt i64 %je_i.158, %t153
  br i1 %t160, label %je_i.body155, label %je_i.exit157
je_i.body155:
  %t161 = mul i64 %ie.148, 80
  %t162 = mul i64 %j_1_o.5, 48
  %t163 = add i64 %t161, %t162
  %t164 = add i64 %t163, %je_i.158
  %p165 = getelementptr inbounds float, ptr %param.0, i64 %t164
  %v166 = load float, ptr %p165, align 4
  %t167 = mul i64 %j_1_o.5, 48
  %t168 = add i64 %t167, %je_i.158
  %p169 = getelementptr inbounds float, ptr %param.1, i64 %t168
  %v170 = load float, ptr %p169, align 4
  %t171 = fadd nsz contract arcp afn float %v166, %v170
  %t172 = call nsz contract arcp afn float @llvm.maximum.f32(float %t171, float 0x0000000000000000)
  %t173 = mul i64 %ie.148, 80
  %t174 = mul i64 %j_1_o.5, 48
  %t175 = add i64 %t173, %t174
  %t176 = add i64 %t175, %je_i.158
  %p177 = getelementptr inbounds float, ptr %param.0, i64 %t176
  store float %t172, ptr %p177, align 4
  br label %je_i.latch156
je_i.latch156:
  %n159 = add nuw nsw i64 %je_i.158, 1
  br label %je_i.head154, !llvm.loop !14
je_i.exit157:
  br label %ie.latch146
ie.latch146:
  %n149 = add nuw nsw i64 %ie.148, 1
  br label %ie.head144, !llvm.loop !17
ie.exit147:
  br label %j_1_o.latch3
j_1_o.latch3:
  %n6 = add nuw nsw i64 %j_1_o.5, 1
  br label %j_1_o.head1
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

!2 = !{!"llvm.loop.vectorize.width", i32 8}

!3 = distinct !{!3, !4}

!4 = !{!"llvm.loop.unroll.disable"}

!5 = distinct !{!5, !6, !7}

!6 = !{!"llvm.loop.vectorize.enable", i1 true}

!7 = !{!"llvm.loop.vectorize.width", i32 8}

!8 = distinct !{!8, !9}

!9 = !{!"llvm.loop.unroll.disable"}

!10 = distinct !{!10, !11}

!11 = !{!"llvm.loop.unroll.disable"}

!12 = distinct !{!12, !13}

!13 = !{!"llvm.loop.unroll.disable"}

!14 = distinct !{!14, !15, !16}

!15 = !{!"llvm.loop.vectorize.enable", i1 true}

!16 = !{!"llvm.loop.vectorize.width", i32 8}

!17 = distinct !{!17, !18, !19}

!18 = !{!"llvm.loop.unroll.disable"}

!19 = !{!"llvm.loop.vectorize.enable", i1 false}
