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
  br label %pw.head8
pw.head8:
  %pw.12 = phi i64 [ 0, %nc.body2 ], [ %n13, %pw.latch10 ]
  %t14 = icmp slt i64 %pw.12, 34
  br i1 %t14, label %pw.body9, label %pw.exit11
pw.body9:
  %t15 = mul i64 0, 578
  %t16 = add i64 %t15, %pw.12
  %p17 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t16
  store float 0xFFF0000000000000, ptr %p17, align 4
  br label %pw.latch10
pw.latch10:
  %n13 = add nuw nsw i64 %pw.12, 1
  br label %pw.head8, !llvm.loop !0
pw.exit11:
  br label %pw_1.head18
pw_1.head18:
  %pw_1.22 = phi i64 [ 0, %pw.exit11 ], [ %n23, %pw_1.latch20 ]
  %t24 = icmp slt i64 %pw_1.22, 34
  br i1 %t24, label %pw_1.body19, label %pw_1.exit21
pw_1.body19:
  %t25 = mul i64 0, 578
  %t26 = add i64 %t25, %pw_1.22
  %t27 = add i64 %t26, 544
  %p28 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t27
  store float 0xFFF0000000000000, ptr %p28, align 4
  br label %pw_1.latch20
pw_1.latch20:
  %n23 = add nuw nsw i64 %pw_1.22, 1
  br label %pw_1.head18, !llvm.loop !3
pw_1.exit21:
  br label %ih.head29
ih.head29:
  %ih.33 = phi i64 [ 0, %pw_1.exit21 ], [ %n34, %ih.latch31 ]
  %t35 = icmp slt i64 %ih.33, 15
  br i1 %t35, label %ih.body30, label %ih.exit32
ih.body30:
  %t36 = mul i64 0, 578
  %t37 = add i64 %t36, 0
  %t38 = mul i64 %ih.33, 34
  %t39 = add i64 %t37, %t38
  %t40 = add i64 %t39, 34
  %p41 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t40
  store float 0xFFF0000000000000, ptr %p41, align 4
  br label %ih.latch31
ih.latch31:
  %n34 = add nuw nsw i64 %ih.33, 1
  br label %ih.head29, !llvm.loop !6
ih.exit32:
  br label %ih_1.head42
ih_1.head42:
  %ih_1.46 = phi i64 [ 0, %ih.exit32 ], [ %n47, %ih_1.latch44 ]
  %t48 = icmp slt i64 %ih_1.46, 15
  br i1 %t48, label %ih_1.body43, label %ih_1.exit45
ih_1.body43:
  br label %e_1.head49
e_1.head49:
  %e_1.53 = phi i64 [ 0, %ih_1.body43 ], [ %n54, %e_1.latch51 ]
  %t55 = icmp slt i64 %e_1.53, 9
  br i1 %t55, label %e_1.body50, label %e_1.exit52
e_1.body50:
  %t56 = mul i64 0, 578
  %t57 = add i64 %t56, %e_1.53
  %t58 = mul i64 %ih_1.46, 34
  %t59 = add i64 %t57, %t58
  %t60 = add i64 %t59, 42
  %p61 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t60
  store float 0xFFF0000000000000, ptr %p61, align 4
  br label %e_1.latch51
e_1.latch51:
  %n54 = add nuw nsw i64 %e_1.53, 1
  br label %e_1.head49, !llvm.loop !9
e_1.exit52:
  br label %ih_1.latch44
ih_1.latch44:
  %n47 = add nuw nsw i64 %ih_1.46, 1
  br label %ih_1.head42, !llvm.loop !12
ih_1.exit45:
  br label %ih_2.head62
ih_2.head62:
  %ih_2.66 = phi i64 [ 0, %ih_1.exit45 ], [ %n67, %ih_2.latch64 ]
  %t68 = icmp slt i64 %ih_2.66, 15
  br i1 %t68, label %ih_2.body63, label %ih_2.exit65
ih_2.body63:
  br label %e_2.head69
e_2.head69:
  %e_2.73 = phi i64 [ 0, %ih_2.body63 ], [ %n74, %e_2.latch71 ]
  %t75 = icmp slt i64 %e_2.73, 9
  br i1 %t75, label %e_2.body70, label %e_2.exit72
e_2.body70:
  %t76 = mul i64 0, 578
  %t77 = add i64 %t76, %e_2.73
  %t78 = mul i64 %ih_2.66, 34
  %t79 = add i64 %t77, %t78
  %t80 = add i64 %t79, 59
  %p81 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t80
  store float 0xFFF0000000000000, ptr %p81, align 4
  br label %e_2.latch71
e_2.latch71:
  %n74 = add nuw nsw i64 %e_2.73, 1
  br label %e_2.head69, !llvm.loop !15
e_2.exit72:
  br label %ih_2.latch64
ih_2.latch64:
  %n67 = add nuw nsw i64 %ih_2.66, 1
  br label %ih_2.head62, !llvm.loop !18
ih_2.exit65:
  br label %ih_3.head82
ih_3.head82:
  %ih_3.86 = phi i64 [ 0, %ih_2.exit65 ], [ %n87, %ih_3.latch84 ]
  %t88 = icmp slt i64 %ih_3.86, 15
  br i1 %t88, label %ih_3.body83, label %ih_3.exit85
ih_3.body83:
  br label %t.head89
t.head89:
  %t.93 = phi i64 [ 0, %ih_3.body83 ], [ %n94, %t.latch91 ]
  %t95 = icmp slt i64 %t.93, 7
  br i1 %t95, label %t.body90, label %t.exit92
t.body90:
  %t96 = mul i64 0, 225
  %t97 = mul i64 %ih_3.86, 15
  %t98 = add i64 %t96, %t97
  %t99 = mul i64 %nc.5, 225
  %t100 = add i64 %t98, %t99
  %t101 = mul i64 %t.93, 2
  %t102 = add i64 %t100, %t101
  %t103 = add i64 %t102, 1
  %p104 = getelementptr inbounds float, ptr %param.1, i64 %t103
  %v105 = load float, ptr %p104, align 4
  %t106 = mul i64 0, 578
  %t107 = mul i64 %ih_3.86, 34
  %t108 = add i64 %t106, %t107
  %t109 = add i64 %t108, %t.93
  %t110 = add i64 %t109, 35
  %p111 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t110
  store float %v105, ptr %p111, align 4
  %t112 = mul i64 0, 225
  %t113 = mul i64 %ih_3.86, 15
  %t114 = add i64 %t112, %t113
  %t115 = mul i64 %nc.5, 225
  %t116 = add i64 %t114, %t115
  %t117 = mul i64 %t.93, 2
  %t118 = add i64 %t116, %t117
  %t119 = add i64 %t118, 2
  %p120 = getelementptr inbounds float, ptr %param.1, i64 %t119
  %v121 = load float, ptr %p120, align 4
  %t122 = mul i64 0, 578
  %t123 = mul i64 %ih_3.86, 34
  %t124 = add i64 %t122, %t123
  %t125 = add i64 %t124, %t.93
  %t126 = add i64 %t125, 52
  %p127 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t126
  store float %v121, ptr %p127, align 4
  br label %t.latch91
t.latch91:
  %n94 = add nuw nsw i64 %t.93, 1
  br label %t.head89, !llvm.loop !21
t.exit92:
  br label %ih_3.latch84
ih_3.latch84:
  %n87 = add nuw nsw i64 %ih_3.86, 1
  br label %ih_3.head82, !llvm.loop !25
ih_3.exit85:
  br label %ih_4.head128
ih_4.head128:
  %ih_4.132 = phi i64 [ 0, %ih_3.exit85 ], [ %n133, %ih_4.latch130 ]
  %t134 = icmp slt i64 %ih_4.132, 15
  br i1 %t134, label %ih_4.body129, label %ih_4.exit131
ih_4.body129:
  %t135 = mul i64 0, 225
  %t136 = mul i64 %ih_4.132, 15
  %t137 = add i64 %t135, %t136
  %t138 = mul i64 %nc.5, 225
  %t139 = add i64 %t137, %t138
  %t140 = mul i64 0, 2
  %t141 = add i64 %t139, %t140
  %p142 = getelementptr inbounds float, ptr %param.1, i64 %t141
  %v143 = load float, ptr %p142, align 4
  %t144 = mul i64 0, 578
  %t145 = mul i64 %ih_4.132, 34
  %t146 = add i64 %t144, %t145
  %t147 = add i64 %t146, 0
  %t148 = add i64 %t147, 51
  %p149 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t148
  store float %v143, ptr %p149, align 4
  br label %ih_4.latch130
ih_4.latch130:
  %n133 = add nuw nsw i64 %ih_4.132, 1
  br label %ih_4.head128, !llvm.loop !27
ih_4.exit131:
  br label %oh.head150
oh.head150:
  %oh.154 = phi i64 [ 0, %ih_4.exit131 ], [ %n155, %oh.latch152 ]
  %t156 = icmp slt i64 %oh.154, 8
  br i1 %t156, label %oh.body151, label %oh.exit153
oh.body151:
  br label %ow.head157
ow.head157:
  %ow.161 = phi i64 [ 0, %oh.body151 ], [ %n162, %ow.latch159 ]
  %t163 = icmp slt i64 %ow.161, 16
  br i1 %t163, label %ow.body158, label %ow.exit160
ow.body158:
  %p164 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow.161
  store float 0xFFF0000000000000, ptr %p164, align 4
  br label %ow.latch159
ow.latch159:
  %n162 = add nuw nsw i64 %ow.161, 1
  br label %ow.head157, !llvm.loop !29
ow.exit160:
  br label %ow_1.head165
ow_1.head165:
  %ow_1.169 = phi i64 [ 0, %ow.exit160 ], [ %n170, %ow_1.latch167 ]
  %t171 = icmp slt i64 %ow_1.169, 16
  br i1 %t171, label %ow_1.body166, label %ow_1.exit168
ow_1.body166:
  %p172 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  %v173 = load float, ptr %p172, align 4
  %t174 = mul i64 0, 34
  %t175 = mul i64 0, 17
  %t176 = add i64 %t174, %t175
  %t177 = mul i64 %oh.154, 68
  %t178 = add i64 %t176, %t177
  %t179 = add i64 %t178, %ow_1.169
  %p180 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t179
  %v181 = load float, ptr %p180, align 4
  %t182 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v173, float %v181)
  %p183 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  store float %t182, ptr %p183, align 4
  %p184 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  %v185 = load float, ptr %p184, align 4
  %t186 = mul i64 0, 34
  %t187 = mul i64 1, 17
  %t188 = add i64 %t186, %t187
  %t189 = mul i64 %oh.154, 68
  %t190 = add i64 %t188, %t189
  %t191 = add i64 %t190, %ow_1.169
  %p192 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t191
  %v193 = load float, ptr %p192, align 4
  %t194 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v185, float %v193)
  %p195 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  store float %t194, ptr %p195, align 4
  %p196 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  %v197 = load float, ptr %p196, align 4
  %t198 = mul i64 0, 34
  %t199 = mul i64 %oh.154, 68
  %t200 = add i64 %t198, %t199
  %r202 = srem i64 2, 2
  %t203 = mul i64 %r202, 17
  %t204 = add i64 %t200, %t203
  %t205 = add i64 %t204, %ow_1.169
  %q206 = sdiv i64 2, 2
  %t208 = add i64 %t205, %q206
  %p209 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t208
  %v210 = load float, ptr %p209, align 4
  %t211 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v197, float %v210)
  %p212 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  store float %t211, ptr %p212, align 4
  %p213 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  %v214 = load float, ptr %p213, align 4
  %t215 = mul i64 1, 34
  %t216 = mul i64 0, 17
  %t217 = add i64 %t215, %t216
  %t218 = mul i64 %oh.154, 68
  %t219 = add i64 %t217, %t218
  %t220 = add i64 %t219, %ow_1.169
  %p221 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t220
  %v222 = load float, ptr %p221, align 4
  %t223 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v214, float %v222)
  %p224 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  store float %t223, ptr %p224, align 4
  %p225 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  %v226 = load float, ptr %p225, align 4
  %t227 = mul i64 1, 34
  %t228 = mul i64 1, 17
  %t229 = add i64 %t227, %t228
  %t230 = mul i64 %oh.154, 68
  %t231 = add i64 %t229, %t230
  %t232 = add i64 %t231, %ow_1.169
  %p233 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t232
  %v234 = load float, ptr %p233, align 4
  %t235 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v226, float %v234)
  %p236 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  store float %t235, ptr %p236, align 4
  %p237 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  %v238 = load float, ptr %p237, align 4
  %t239 = mul i64 1, 34
  %t240 = mul i64 %oh.154, 68
  %t241 = add i64 %t239, %t240
  %r243 = srem i64 2, 2
  %t244 = mul i64 %r243, 17
  %t245 = add i64 %t241, %t244
  %t246 = add i64 %t245, %ow_1.169
  %q247 = sdiv i64 2, 2
  %t249 = add i64 %t246, %q247
  %p250 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t249
  %v251 = load float, ptr %p250, align 4
  %t252 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v238, float %v251)
  %p253 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  store float %t252, ptr %p253, align 4
  %p254 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  %v255 = load float, ptr %p254, align 4
  %t256 = mul i64 2, 34
  %t257 = mul i64 0, 17
  %t258 = add i64 %t256, %t257
  %t259 = mul i64 %oh.154, 68
  %t260 = add i64 %t258, %t259
  %t261 = add i64 %t260, %ow_1.169
  %p262 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t261
  %v263 = load float, ptr %p262, align 4
  %t264 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v255, float %v263)
  %p265 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  store float %t264, ptr %p265, align 4
  %p266 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  %v267 = load float, ptr %p266, align 4
  %t268 = mul i64 2, 34
  %t269 = mul i64 1, 17
  %t270 = add i64 %t268, %t269
  %t271 = mul i64 %oh.154, 68
  %t272 = add i64 %t270, %t271
  %t273 = add i64 %t272, %ow_1.169
  %p274 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t273
  %v275 = load float, ptr %p274, align 4
  %t276 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v267, float %v275)
  %p277 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  store float %t276, ptr %p277, align 4
  %p278 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  %v279 = load float, ptr %p278, align 4
  %t280 = mul i64 2, 34
  %t281 = mul i64 %oh.154, 68
  %t282 = add i64 %t280, %t281
  %r284 = srem i64 2, 2
  %t285 = mul i64 %r284, 17
  %t286 = add i64 %t282, %t285
  %t287 = add i64 %t286, %ow_1.169
  %q288 = sdiv i64 2, 2
  %t290 = add i64 %t287, %q288
  %p291 = getelementptr inbounds float, ptr %l.maxpool2d1_xpad, i64 %t290
  %v292 = load float, ptr %p291, align 4
  %t293 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v279, float %v292)
  %p294 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_1.169
  store float %t293, ptr %p294, align 4
  br label %ow_1.latch167
ow_1.latch167:
  %n170 = add nuw nsw i64 %ow_1.169, 1
  br label %ow_1.head165, !llvm.loop !32
ow_1.exit168:
  br label %ow_2.head295
ow_2.head295:
  %ow_2.299 = phi i64 [ 0, %ow_1.exit168 ], [ %n300, %ow_2.latch297 ]
  %t301 = icmp slt i64 %ow_2.299, 8
  br i1 %t301, label %ow_2.body296, label %ow_2.exit298
ow_2.body296:
  %p302 = getelementptr inbounds float, ptr %l.maxpool2d1_acc, i64 %ow_2.299
  %v303 = load float, ptr %p302, align 4
  %t304 = mul i64 %nc.5, 64
  %t305 = mul i64 %oh.154, 8
  %t306 = add i64 %t304, %t305
  %t307 = add i64 %t306, %ow_2.299
  %p308 = getelementptr inbounds float, ptr %param.0, i64 %t307
  store float %v303, ptr %p308, align 4
  br label %ow_2.latch297
ow_2.latch297:
  %n300 = add nuw nsw i64 %ow_2.299, 1
  br label %ow_2.head295, !llvm.loop !35
ow_2.exit298:
  br label %oh.latch152
oh.latch152:
  %n155 = add nuw nsw i64 %oh.154, 1
  br label %oh.head150, !llvm.loop !38
oh.exit153:
  br label %nc.latch3
nc.latch3:
  %n6 = add nuw nsw i64 %nc.5, 1
  br label %nc.head1, !llvm.loop !41
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

!4 = !{!"llvm.loop.vectorize.enable", i1 true}

!5 = !{!"llvm.loop.vectorize.width", i32 8}

!6 = distinct !{!6, !7, !8}

!7 = !{!"llvm.loop.unroll.disable"}

!8 = !{!"llvm.loop.vectorize.enable", i1 false}

!9 = distinct !{!9, !10, !11}

!10 = !{!"llvm.loop.vectorize.enable", i1 true}

!11 = !{!"llvm.loop.vectorize.width", i32 8}

!12 = distinct !{!12, !13, !14}

!13 = !{!"llvm.loop.unroll.disable"}

!14 = !{!"llvm.loop.vectorize.enable", i1 false}

!15 = distinct !{!15, !16, !17}

!16 = !{!"llvm.loop.vectorize.enable", i1 true}

!17 = !{!"llvm.loop.vectorize.width", i32 8}

!18 = distinct !{!18, !19, !20}

!19 = !{!"llvm.loop.unroll.disable"}

!20 = !{!"llvm.loop.vectorize.enable", i1 false}

!21 = distinct !{!21, !22, !23, !24}

!22 = !{!"llvm.loop.vectorize.enable", i1 true}

!23 = !{!"llvm.loop.unroll.disable"}

!24 = !{!"llvm.loop.vectorize.width", i32 4}

!25 = distinct !{!25, !26}

!26 = !{!"llvm.loop.unroll.disable"}

!27 = distinct !{!27, !28}

!28 = !{!"llvm.loop.unroll.disable"}

!29 = distinct !{!29, !30, !31}

!30 = !{!"llvm.loop.vectorize.enable", i1 true}

!31 = !{!"llvm.loop.vectorize.width", i32 8}

!32 = distinct !{!32, !33, !34}

!33 = !{!"llvm.loop.vectorize.enable", i1 true}

!34 = !{!"llvm.loop.vectorize.width", i32 8}

!35 = distinct !{!35, !36, !37}

!36 = !{!"llvm.loop.vectorize.enable", i1 true}

!37 = !{!"llvm.loop.vectorize.width", i32 8}

!38 = distinct !{!38, !39, !40}

!39 = !{!"llvm.loop.unroll.disable"}

!40 = !{!"llvm.loop.vectorize.enable", i1 false}

!41 = distinct !{!41, !42}

!42 = !{!"llvm.loop.unroll.disable"}
