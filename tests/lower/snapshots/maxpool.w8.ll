declare float @llvm.maximum.f32(float, float)

define internal void @maxpool.body(ptr noalias nocapture align 4 %param.0, ptr noalias nocapture align 4 %param.1, i64 %lo, i64 %hi) nounwind {
entry:
  %l.maxpool2d0_xpad = alloca [578 x float], align 64
  %l.maxpool2d0_acc = alloca [16 x float], align 64
  ; stage maxpool2d0
  br label %nc_o.head1
nc_o.head1:
  %nc_o.5 = phi i64 [ %lo, %entry ], [ %n6, %nc_o.latch3 ]
  %t7 = icmp slt i64 %nc_o.5, %hi
  br i1 %t7, label %nc_o.body2, label %nc_o.exit4
nc_o.body2:
  br label %nc_i.head8
nc_i.head8:
  %nc_i.12 = phi i64 [ 0, %nc_o.body2 ], [ %n13, %nc_i.latch10 ]
  %t14 = icmp slt i64 %nc_i.12, 4
  br i1 %t14, label %nc_i.body9, label %nc_i.exit11
nc_i.body9:
  ; stage maxpool2d0.pad
  br label %pw.head15
pw.head15:
  %pw.19 = phi i64 [ 0, %nc_i.body9 ], [ %n20, %pw.latch17 ]
  %t21 = icmp slt i64 %pw.19, 34
  br i1 %t21, label %pw.body16, label %pw.exit18
pw.body16:
  %p22 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %pw.19
  store float 0xFFF0000000000000, ptr %p22, align 4
  br label %pw.latch17
pw.latch17:
  %n20 = add nuw nsw i64 %pw.19, 1
  br label %pw.head15, !llvm.loop !0
pw.exit18:
  br label %pw_1.head23
pw_1.head23:
  %pw_1.27 = phi i64 [ 0, %pw.exit18 ], [ %n28, %pw_1.latch25 ]
  %t29 = icmp slt i64 %pw_1.27, 34
  br i1 %t29, label %pw_1.body24, label %pw_1.exit26
pw_1.body24:
  %t30 = add i64 %pw_1.27, 544
  %p31 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t30
  store float 0xFFF0000000000000, ptr %p31, align 4
  br label %pw_1.latch25
pw_1.latch25:
  %n28 = add nuw nsw i64 %pw_1.27, 1
  br label %pw_1.head23, !llvm.loop !3
pw_1.exit26:
  br label %ih.head32
ih.head32:
  %ih.36 = phi i64 [ 0, %pw_1.exit26 ], [ %n37, %ih.latch34 ]
  %t38 = icmp slt i64 %ih.36, 15
  br i1 %t38, label %ih.body33, label %ih.exit35
ih.body33:
  %t39 = mul i64 %ih.36, 34
  %t40 = add i64 %t39, 34
  %p41 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t40
  store float 0xFFF0000000000000, ptr %p41, align 4
  br label %e_1.head42
e_1.head42:
  %e_1.46 = phi i64 [ 0, %ih.body33 ], [ %n47, %e_1.latch44 ]
  %t48 = icmp slt i64 %e_1.46, 9
  br i1 %t48, label %e_1.body43, label %e_1.exit45
e_1.body43:
  %t49 = mul i64 %ih.36, 34
  %t50 = add i64 %e_1.46, %t49
  %t51 = add i64 %t50, 42
  %p52 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t51
  store float 0xFFF0000000000000, ptr %p52, align 4
  br label %e_1.latch44
e_1.latch44:
  %n47 = add nuw nsw i64 %e_1.46, 1
  br label %e_1.head42, !llvm.loop !6
e_1.exit45:
  br label %e_2.head53
e_2.head53:
  %e_2.57 = phi i64 [ 0, %e_1.exit45 ], [ %n58, %e_2.latch55 ]
  %t59 = icmp slt i64 %e_2.57, 9
  br i1 %t59, label %e_2.body54, label %e_2.exit56
e_2.body54:
  %t60 = mul i64 %ih.36, 34
  %t61 = add i64 %e_2.57, %t60
  %t62 = add i64 %t61, 59
  %p63 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t62
  store float 0xFFF0000000000000, ptr %p63, align 4
  br label %e_2.latch55
e_2.latch55:
  %n58 = add nuw nsw i64 %e_2.57, 1
  br label %e_2.head53, !llvm.loop !9
e_2.exit56:
  br label %t.head64
t.head64:
  %t.68 = phi i64 [ 0, %e_2.exit56 ], [ %n69, %t.latch66 ]
  %t70 = icmp slt i64 %t.68, 7
  br i1 %t70, label %t.body65, label %t.exit67
t.body65:
  %t71 = mul i64 %ih.36, 15
  %t72 = mul i64 %nc_i.12, 225
  %t73 = add i64 %t71, %t72
  %t74 = mul i64 %nc_o.5, 900
  %t75 = add i64 %t73, %t74
  %t76 = mul i64 %t.68, 2
  %t77 = add i64 %t75, %t76
  %p78 = getelementptr inbounds float, ptr %param.1, i64 %t77
  %v79 = load float, ptr %p78, align 4
  %t80 = mul i64 %ih.36, 34
  %t81 = add i64 %t80, %t.68
  %t82 = add i64 %t81, 51
  %p83 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t82
  store float %v79, ptr %p83, align 4
  %t84 = add i64 %t77, 1
  %p85 = getelementptr inbounds float, ptr %param.1, i64 %t84
  %v86 = load float, ptr %p85, align 4
  %t87 = add i64 %t81, 35
  %p88 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t87
  store float %v86, ptr %p88, align 4
  br label %t.latch66
t.latch66:
  %n69 = add nuw nsw i64 %t.68, 1
  br label %t.head64, !llvm.loop !12
t.exit67:
  %t89 = mul i64 %ih.36, 15
  %t90 = mul i64 %nc_i.12, 225
  %t91 = add i64 %t89, %t90
  %t92 = mul i64 %nc_o.5, 900
  %t93 = add i64 %t91, %t92
  %t94 = add i64 %t93, 14
  %p95 = getelementptr inbounds float, ptr %param.1, i64 %t94
  %v96 = load float, ptr %p95, align 4
  %t97 = mul i64 %ih.36, 34
  %t98 = add i64 %t97, 58
  %p99 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t98
  store float %v96, ptr %p99, align 4
  br label %ih.latch34
ih.latch34:
  %n37 = add nuw nsw i64 %ih.36, 1
  br label %ih.head32, !llvm.loop !16
ih.exit35:
  br label %oh.head100
oh.head100:
  %oh.104 = phi i64 [ 0, %ih.exit35 ], [ %n105, %oh.latch102 ]
  %t106 = icmp slt i64 %oh.104, 8
  br i1 %t106, label %oh.body101, label %oh.exit103
oh.body101:
  br label %ow.head107
ow.head107:
  %ow.111 = phi i64 [ 0, %oh.body101 ], [ %n112, %ow.latch109 ]
  %t113 = icmp slt i64 %ow.111, 16
  br i1 %t113, label %ow.body108, label %ow.exit110
ow.body108:
  %p114 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow.111
  store float 0xFFF0000000000000, ptr %p114, align 4
  br label %ow.latch109
ow.latch109:
  %n112 = add nuw nsw i64 %ow.111, 1
  br label %ow.head107, !llvm.loop !19
ow.exit110:
  br label %ow_1.head115
ow_1.head115:
  %ow_1.119 = phi i64 [ 0, %ow.exit110 ], [ %n120, %ow_1.latch117 ]
  %t121 = icmp slt i64 %ow_1.119, 16
  br i1 %t121, label %ow_1.body116, label %ow_1.exit118
ow_1.body116:
  %p122 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.119
  %v123 = load float, ptr %p122, align 4
  %t124 = mul i64 %oh.104, 68
  %t125 = add i64 %t124, %ow_1.119
  %p126 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t125
  %v127 = load float, ptr %p126, align 4
  %t128 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v123, float %v127)
  store float %t128, ptr %p122, align 4
  %v129 = load float, ptr %p122, align 4
  %t130 = add i64 17, %t124
  %t131 = add i64 %t130, %ow_1.119
  %p132 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t131
  %v133 = load float, ptr %p132, align 4
  %t134 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v129, float %v133)
  store float %t134, ptr %p122, align 4
  %v135 = load float, ptr %p122, align 4
  %t136 = add i64 %t125, 1
  %p137 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t136
  %v138 = load float, ptr %p137, align 4
  %t139 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v135, float %v138)
  store float %t139, ptr %p122, align 4
  %v140 = load float, ptr %p122, align 4
  %t141 = add i64 34, %t124
  %t142 = add i64 %t141, %ow_1.119
  %p143 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t142
  %v144 = load float, ptr %p143, align 4
  %t145 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v140, float %v144)
  store float %t145, ptr %p122, align 4
  %v146 = load float, ptr %p122, align 4
  %t147 = add i64 51, %t124
  %t148 = add i64 %t147, %ow_1.119
  %p149 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t148
  %v150 = load float, ptr %p149, align 4
  %t151 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v146, float %v150)
  store float %t151, ptr %p122, align 4
  %v152 = load float, ptr %p122, align 4
  %t153 = add i64 %t142, 1
  %p154 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t153
  %v155 = load float, ptr %p154, align 4
  %t156 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v152, float %v155)
  store float %t156, ptr %p122, align 4
  %v157 = load float, ptr %p122, align 4
  %t158 = add i64 68, %t124
  %t159 = add i64 %t158, %ow_1.119
  %p160 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t159
  %v161 = load float, ptr %p160, align 4
  %t162 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v157, float %v161)
  store float %t162, ptr %p122, align 4
  %v163 = load float, ptr %p122, align 4
  %t164 = add i64 85, %t124
  %t165 = add i64 %t164, %ow_1.119
  %p166 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t165
  %v167 = load float, ptr %p166, align 4
  %t168 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v163, float %v167)
  store float %t168, ptr %p122, align 4
  %v169 = load float, ptr %p122, align 4
  %t170 = add i64 %t159, 1
  %p171 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t170
  %v172 = load float, ptr %p171, align 4
  %t173 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v169, float %v172)
  store float %t173, ptr %p122, align 4
  br label %ow_1.latch117
ow_1.latch117:
  %n120 = add nuw nsw i64 %ow_1.119, 1
  br label %ow_1.head115, !llvm.loop !22
ow_1.exit118:
  br label %ow_2.head174
ow_2.head174:
  %ow_2.178 = phi i64 [ 0, %ow_1.exit118 ], [ %n179, %ow_2.latch176 ]
  %t180 = icmp slt i64 %ow_2.178, 8
  br i1 %t180, label %ow_2.body175, label %ow_2.exit177
ow_2.body175:
  %p181 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_2.178
  %v182 = load float, ptr %p181, align 4
  %t183 = mul i64 %nc_i.12, 64
  %t184 = mul i64 %nc_o.5, 256
  %t185 = add i64 %t183, %t184
  %t186 = mul i64 %oh.104, 8
  %t187 = add i64 %t185, %t186
  %t188 = add i64 %t187, %ow_2.178
  %p189 = getelementptr inbounds float, ptr %param.0, i64 %t188
  store float %v182, ptr %p189, align 4
  br label %ow_2.latch176
ow_2.latch176:
  %n179 = add nuw nsw i64 %ow_2.178, 1
  br label %ow_2.head174, !llvm.loop !25
ow_2.exit177:
  br label %oh.latch102
oh.latch102:
  %n105 = add nuw nsw i64 %oh.104, 1
  br label %oh.head100, !llvm.loop !28
oh.exit103:
  br label %nc_i.latch10
nc_i.latch10:
  %n13 = add nuw nsw i64 %nc_i.12, 1
  br label %nc_i.head8, !llvm.loop !31
nc_i.exit11:
  br label %nc_o.latch3
nc_o.latch3:
  %n6 = add nuw nsw i64 %nc_o.5, 1
  br label %nc_o.head1
nc_o.exit4:
  ret void
}

define void @maxpool(ptr %args, i64 %lo, i64 %hi) nounwind {
entry:
  %g0 = getelementptr ptr, ptr %args, i64 0
  %a0 = load ptr, ptr %g0, align 8
  %g1 = getelementptr ptr, ptr %args, i64 1
  %a1 = load ptr, ptr %g1, align 8
  call void @maxpool.body(ptr %a0, ptr %a1, i64 %lo, i64 %hi)
  ret void
}

!0 = distinct !{!0, !1, !2}

!1 = !{!"llvm.loop.vectorize.enable", i1 true}

!2 = !{!"llvm.loop.vectorize.width", i32 8}

!3 = distinct !{!3, !4, !5}

!4 = !{!"llvm.loop.vectorize.enable", i1 true}

!5 = !{!"llvm.loop.vectorize.width", i32 8}

!6 = distinct !{!6, !7, !8}

!7 = !{!"llvm.loop.vectorize.enable", i1 true}

!8 = !{!"llvm.loop.vectorize.width", i32 8}

!9 = distinct !{!9, !10, !11}

!10 = !{!"llvm.loop.vectorize.enable", i1 true}

!11 = !{!"llvm.loop.vectorize.width", i32 8}

!12 = distinct !{!12, !13, !14, !15}

!13 = !{!"llvm.loop.vectorize.enable", i1 true}

!14 = !{!"llvm.loop.unroll.disable"}

!15 = !{!"llvm.loop.vectorize.width", i32 4}

!16 = distinct !{!16, !17, !18}

!17 = !{!"llvm.loop.unroll.disable"}

!18 = !{!"llvm.loop.vectorize.enable", i1 false}

!19 = distinct !{!19, !20, !21}

!20 = !{!"llvm.loop.vectorize.enable", i1 true}

!21 = !{!"llvm.loop.vectorize.width", i32 8}

!22 = distinct !{!22, !23, !24}

!23 = !{!"llvm.loop.vectorize.enable", i1 true}

!24 = !{!"llvm.loop.vectorize.width", i32 8}

!25 = distinct !{!25, !26, !27}

!26 = !{!"llvm.loop.vectorize.enable", i1 true}

!27 = !{!"llvm.loop.vectorize.width", i32 8}

!28 = distinct !{!28, !29, !30}

!29 = !{!"llvm.loop.unroll.disable"}

!30 = !{!"llvm.loop.vectorize.enable", i1 false}

!31 = distinct !{!31, !32}

!32 = !{!"llvm.loop.unroll.disable"}
