declare float @llvm.maximum.f32(float, float)

define internal void @maxpool.body(ptr noalias nocapture align 4 %param.0, ptr noalias nocapture align 4 %param.1, i64 %lo, i64 %hi) nounwind {
entry:
  %l.maxpool2d1_xpad = alloca [578 x float], align 64
  %l.maxpool2d1_acc = alloca [16 x float], align 64
  ; stage maxpool2d1
  br label %nc.head1
nc.head1:
  %nc.5 = phi i64 [ 0, %entry ], [ %n6, %nc.latch3 ]
  %t7 = icmp slt i64 %nc.5, 8
  br i1 %t7, label %nc.body2, label %nc.exit4
nc.body2:
  ; stage maxpool2d1.pad
  br label %cr.head8
cr.head8:
  %cr.12 = phi i64 [ 0, %nc.body2 ], [ %n13, %cr.latch10 ]
  %t14 = icmp slt i64 %cr.12, 17
  br i1 %t14, label %cr.body9, label %cr.exit11
cr.body9:
  br label %pw.head15
pw.head15:
  %pw.19 = phi i64 [ 0, %cr.body9 ], [ %n20, %pw.latch17 ]
  %t21 = icmp slt i64 %pw.19, 34
  br i1 %t21, label %pw.body16, label %pw.exit18
pw.body16:
  %t22 = mul i64 %cr.12, 34
  %t23 = add i64 %t22, %pw.19
  %p24 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t23
  store float 0xFFF0000000000000, ptr %p24, align 4
  br label %pw.latch17
pw.latch17:
  %n20 = add nuw nsw i64 %pw.19, 1
  br label %pw.head15, !llvm.loop !0
pw.exit18:
  br label %cr.latch10
cr.latch10:
  %n13 = add nuw nsw i64 %cr.12, 1
  br label %cr.head8, !llvm.loop !3
cr.exit11:
  br label %ih.head25
ih.head25:
  %ih.29 = phi i64 [ 0, %cr.exit11 ], [ %n30, %ih.latch27 ]
  %t31 = icmp slt i64 %ih.29, 15
  br i1 %t31, label %ih.body26, label %ih.exit28
ih.body26:
  br label %t.head32
t.head32:
  %t.36 = phi i64 [ 0, %ih.body26 ], [ %n37, %t.latch34 ]
  %t38 = icmp slt i64 %t.36, 7
  br i1 %t38, label %t.body33, label %t.exit35
t.body33:
  %t39 = mul i64 0, 225
  %t40 = mul i64 %ih.29, 15
  %t41 = add i64 %t39, %t40
  %t42 = mul i64 %nc.5, 225
  %t43 = add i64 %t41, %t42
  %t44 = mul i64 %t.36, 2
  %t45 = add i64 %t43, %t44
  %t46 = add i64 %t45, 1
  %p47 = getelementptr inbounds float, ptr %param.1, i64 %t46
  %v48 = load float, ptr %p47, align 4
  %t49 = mul i64 0, 578
  %t50 = mul i64 %ih.29, 34
  %t51 = add i64 %t49, %t50
  %t52 = add i64 %t51, %t.36
  %t53 = add i64 %t52, 35
  %p54 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t53
  store float %v48, ptr %p54, align 4
  %t55 = mul i64 0, 225
  %t56 = mul i64 %ih.29, 15
  %t57 = add i64 %t55, %t56
  %t58 = mul i64 %nc.5, 225
  %t59 = add i64 %t57, %t58
  %t60 = mul i64 %t.36, 2
  %t61 = add i64 %t59, %t60
  %t62 = add i64 %t61, 2
  %p63 = getelementptr inbounds float, ptr %param.1, i64 %t62
  %v64 = load float, ptr %p63, align 4
  %t65 = mul i64 0, 578
  %t66 = mul i64 %ih.29, 34
  %t67 = add i64 %t65, %t66
  %t68 = add i64 %t67, %t.36
  %t69 = add i64 %t68, 52
  %p70 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t69
  store float %v64, ptr %p70, align 4
  br label %t.latch34
t.latch34:
  %n37 = add nuw nsw i64 %t.36, 1
  br label %t.head32, !llvm.loop !6
t.exit35:
  br label %ih.latch27
ih.latch27:
  %n30 = add nuw nsw i64 %ih.29, 1
  br label %ih.head25, !llvm.loop !10
ih.exit28:
  br label %ih_1.head71
ih_1.head71:
  %ih_1.75 = phi i64 [ 0, %ih.exit28 ], [ %n76, %ih_1.latch73 ]
  %t77 = icmp slt i64 %ih_1.75, 15
  br i1 %t77, label %ih_1.body72, label %ih_1.exit74
ih_1.body72:
  %t78 = mul i64 0, 225
  %t79 = mul i64 %ih_1.75, 15
  %t80 = add i64 %t78, %t79
  %t81 = mul i64 %nc.5, 225
  %t82 = add i64 %t80, %t81
  %t83 = mul i64 0, 2
  %t84 = add i64 %t82, %t83
  %p85 = getelementptr inbounds float, ptr %param.1, i64 %t84
  %v86 = load float, ptr %p85, align 4
  %t87 = mul i64 0, 578
  %t88 = mul i64 %ih_1.75, 34
  %t89 = add i64 %t87, %t88
  %t90 = add i64 %t89, 0
  %t91 = add i64 %t90, 51
  %p92 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t91
  store float %v86, ptr %p92, align 4
  br label %ih_1.latch73
ih_1.latch73:
  %n76 = add nuw nsw i64 %ih_1.75, 1
  br label %ih_1.head71, !llvm.loop !12
ih_1.exit74:
  br label %oh.head93
oh.head93:
  %oh.97 = phi i64 [ 0, %ih_1.exit74 ], [ %n98, %oh.latch95 ]
  %t99 = icmp slt i64 %oh.97, 8
  br i1 %t99, label %oh.body94, label %oh.exit96
oh.body94:
  br label %ow.head100
ow.head100:
  %ow.104 = phi i64 [ 0, %oh.body94 ], [ %n105, %ow.latch102 ]
  %t106 = icmp slt i64 %ow.104, 16
  br i1 %t106, label %ow.body101, label %ow.exit103
ow.body101:
  %p107 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow.104
  store float 0xFFF0000000000000, ptr %p107, align 4
  br label %ow.latch102
ow.latch102:
  %n105 = add nuw nsw i64 %ow.104, 1
  br label %ow.head100, !llvm.loop !14
ow.exit103:
  br label %ow_1.head108
ow_1.head108:
  %ow_1.112 = phi i64 [ 0, %ow.exit103 ], [ %n113, %ow_1.latch110 ]
  %t114 = icmp slt i64 %ow_1.112, 16
  br i1 %t114, label %ow_1.body109, label %ow_1.exit111
ow_1.body109:
  %p115 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  %v116 = load float, ptr %p115, align 4
  %t117 = mul i64 0, 34
  %t118 = mul i64 0, 17
  %t119 = add i64 %t117, %t118
  %t120 = mul i64 %oh.97, 68
  %t121 = add i64 %t119, %t120
  %t122 = add i64 %t121, %ow_1.112
  %p123 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t122
  %v124 = load float, ptr %p123, align 4
  %t125 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v116, float %v124)
  %p126 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  store float %t125, ptr %p126, align 4
  %p127 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  %v128 = load float, ptr %p127, align 4
  %t129 = mul i64 0, 34
  %t130 = mul i64 1, 17
  %t131 = add i64 %t129, %t130
  %t132 = mul i64 %oh.97, 68
  %t133 = add i64 %t131, %t132
  %t134 = add i64 %t133, %ow_1.112
  %p135 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t134
  %v136 = load float, ptr %p135, align 4
  %t137 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v128, float %v136)
  %p138 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  store float %t137, ptr %p138, align 4
  %p139 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  %v140 = load float, ptr %p139, align 4
  %t141 = mul i64 0, 34
  %t142 = mul i64 %oh.97, 68
  %t143 = add i64 %t141, %t142
  %r145 = srem i64 2, 2
  %t146 = mul i64 %r145, 17
  %t147 = add i64 %t143, %t146
  %t148 = add i64 %t147, %ow_1.112
  %q149 = sdiv i64 2, 2
  %t151 = add i64 %t148, %q149
  %p152 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t151
  %v153 = load float, ptr %p152, align 4
  %t154 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v140, float %v153)
  %p155 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  store float %t154, ptr %p155, align 4
  %p156 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  %v157 = load float, ptr %p156, align 4
  %t158 = mul i64 1, 34
  %t159 = mul i64 0, 17
  %t160 = add i64 %t158, %t159
  %t161 = mul i64 %oh.97, 68
  %t162 = add i64 %t160, %t161
  %t163 = add i64 %t162, %ow_1.112
  %p164 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t163
  %v165 = load float, ptr %p164, align 4
  %t166 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v157, float %v165)
  %p167 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  store float %t166, ptr %p167, align 4
  %p168 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  %v169 = load float, ptr %p168, align 4
  %t170 = mul i64 1, 34
  %t171 = mul i64 1, 17
  %t172 = add i64 %t170, %t171
  %t173 = mul i64 %oh.97, 68
  %t174 = add i64 %t172, %t173
  %t175 = add i64 %t174, %ow_1.112
  %p176 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t175
  %v177 = load float, ptr %p176, align 4
  %t178 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v169, float %v177)
  %p179 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  store float %t178, ptr %p179, align 4
  %p180 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  %v181 = load float, ptr %p180, align 4
  %t182 = mul i64 1, 34
  %t183 = mul i64 %oh.97, 68
  %t184 = add i64 %t182, %t183
  %r186 = srem i64 2, 2
  %t187 = mul i64 %r186, 17
  %t188 = add i64 %t184, %t187
  %t189 = add i64 %t188, %ow_1.112
  %q190 = sdiv i64 2, 2
  %t192 = add i64 %t189, %q190
  %p193 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t192
  %v194 = load float, ptr %p193, align 4
  %t195 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v181, float %v194)
  %p196 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  store float %t195, ptr %p196, align 4
  %p197 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  %v198 = load float, ptr %p197, align 4
  %t199 = mul i64 2, 34
  %t200 = mul i64 0, 17
  %t201 = add i64 %t199, %t200
  %t202 = mul i64 %oh.97, 68
  %t203 = add i64 %t201, %t202
  %t204 = add i64 %t203, %ow_1.112
  %p205 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t204
  %v206 = load float, ptr %p205, align 4
  %t207 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v198, float %v206)
  %p208 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  store float %t207, ptr %p208, align 4
  %p209 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  %v210 = load float, ptr %p209, align 4
  %t211 = mul i64 2, 34
  %t212 = mul i64 1, 17
  %t213 = add i64 %t211, %t212
  %t214 = mul i64 %oh.97, 68
  %t215 = add i64 %t213, %t214
  %t216 = add i64 %t215, %ow_1.112
  %p217 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t216
  %v218 = load float, ptr %p217, align 4
  %t219 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v210, float %v218)
  %p220 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  store float %t219, ptr %p220, align 4
  %p221 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  %v222 = load float, ptr %p221, align 4
  %t223 = mul i64 2, 34
  %t224 = mul i64 %oh.97, 68
  %t225 = add i64 %t223, %t224
  %r227 = srem i64 2, 2
  %t228 = mul i64 %r227, 17
  %t229 = add i64 %t225, %t228
  %t230 = add i64 %t229, %ow_1.112
  %q231 = sdiv i64 2, 2
  %t233 = add i64 %t230, %q231
  %p234 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t233
  %v235 = load float, ptr %p234, align 4
  %t236 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v222, float %v235)
  %p237 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.112
  store float %t236, ptr %p237, align 4
  br label %ow_1.latch110
ow_1.latch110:
  %n113 = add nuw nsw i64 %ow_1.112, 1
  br label %ow_1.head108, !llvm.loop !17
ow_1.exit111:
  br label %ow_2.head238
ow_2.head238:
  %ow_2.242 = phi i64 [ 0, %ow_1.exit111 ], [ %n243, %ow_2.latch240 ]
  %t244 = icmp slt i64 %ow_2.242, 8
  br i1 %t244, label %ow_2.body239, label %ow_2.exit241
ow_2.body239:
  %p245 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_2.242
  %v246 = load float, ptr %p245, align 4
  %t247 = mul i64 %nc.5, 64
  %t248 = mul i64 %oh.97, 8
  %t249 = add i64 %t247, %t248
  %t250 = add i64 %t249, %ow_2.242
  %p251 = getelementptr inbounds float, ptr %param.0, i64 %t250
  store float %v246, ptr %p251, align 4
  br label %ow_2.latch240
ow_2.latch240:
  %n243 = add nuw nsw i64 %ow_2.242, 1
  br label %ow_2.head238, !llvm.loop !20
ow_2.exit241:
  br label %oh.latch95
oh.latch95:
  %n98 = add nuw nsw i64 %oh.97, 1
  br label %oh.head93, !llvm.loop !23
oh.exit96:
  br label %nc.latch3
nc.latch3:
  %n6 = add nuw nsw i64 %nc.5, 1
  br label %nc.head1, !llvm.loop !26
nc.exit4:
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

!4 = !{!"llvm.loop.unroll.disable"}

!5 = !{!"llvm.loop.vectorize.enable", i1 false}

!6 = distinct !{!6, !7, !8, !9}

!7 = !{!"llvm.loop.vectorize.enable", i1 true}

!8 = !{!"llvm.loop.unroll.disable"}

!9 = !{!"llvm.loop.vectorize.width", i32 4}

!10 = distinct !{!10, !11}

!11 = !{!"llvm.loop.unroll.disable"}

!12 = distinct !{!12, !13}

!13 = !{!"llvm.loop.unroll.disable"}

!14 = distinct !{!14, !15, !16}

!15 = !{!"llvm.loop.vectorize.enable", i1 true}

!16 = !{!"llvm.loop.vectorize.width", i32 8}

!17 = distinct !{!17, !18, !19}

!18 = !{!"llvm.loop.vectorize.enable", i1 true}

!19 = !{!"llvm.loop.vectorize.width", i32 8}

!20 = distinct !{!20, !21, !22}

!21 = !{!"llvm.loop.vectorize.enable", i1 true}

!22 = !{!"llvm.loop.vectorize.width", i32 8}

!23 = distinct !{!23, !24, !25}

!24 = !{!"llvm.loop.unroll.disable"}

!25 = !{!"llvm.loop.vectorize.enable", i1 false}

!26 = distinct !{!26, !27}

!27 = !{!"llvm.loop.unroll.disable"}
