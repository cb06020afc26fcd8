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
  %t22 = mul i64 0, 578
  %t23 = add i64 %t22, %pw.19
  %p24 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t23
  store float 0xFFF0000000000000, ptr %p24, align 4
  br label %pw.latch17
pw.latch17:
  %n20 = add nuw nsw i64 %pw.19, 1
  br label %pw.head15, !llvm.loop !0
pw.exit18:
  br label %pw_1.head25
pw_1.head25:
  %pw_1.29 = phi i64 [ 0, %pw.exit18 ], [ %n30, %pw_1.latch27 ]
  %t31 = icmp slt i64 %pw_1.29, 34
  br i1 %t31, label %pw_1.body26, label %pw_1.exit28
pw_1.body26:
  %t32 = mul i64 0, 578
  %t33 = add i64 %t32, %pw_1.29
  %t34 = add i64 %t33, 544
  %p35 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t34
  store float 0xFFF0000000000000, ptr %p35, align 4
  br label %pw_1.latch27
pw_1.latch27:
  %n30 = add nuw nsw i64 %pw_1.29, 1
  br label %pw_1.head25, !llvm.loop !3
pw_1.exit28:
  br label %ih.head36
ih.head36:
  %ih.40 = phi i64 [ 0, %pw_1.exit28 ], [ %n41, %ih.latch38 ]
  %t42 = icmp slt i64 %ih.40, 15
  br i1 %t42, label %ih.body37, label %ih.exit39
ih.body37:
  %t43 = mul i64 0, 578
  %t44 = add i64 %t43, 0
  %t45 = mul i64 %ih.40, 34
  %t46 = add i64 %t44, %t45
  %t47 = add i64 %t46, 34
  %p48 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t47
  store float 0xFFF0000000000000, ptr %p48, align 4
  br label %e_1.head49
e_1.head49:
  %e_1.53 = phi i64 [ 0, %ih.body37 ], [ %n54, %e_1.latch51 ]
  %t55 = icmp slt i64 %e_1.53, 9
  br i1 %t55, label %e_1.body50, label %e_1.exit52
e_1.body50:
  %t56 = mul i64 0, 578
  %t57 = add i64 %t56, %e_1.53
  %t58 = mul i64 %ih.40, 34
  %t59 = add i64 %t57, %t58
  %t60 = add i64 %t59, 42
  %p61 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t60
  store float 0xFFF0000000000000, ptr %p61, align 4
  br label %e_1.latch51
e_1.latch51:
  %n54 = add nuw nsw i64 %e_1.53, 1
  br label %e_1.head49, !llvm.loop !6
e_1.exit52:
  br label %e_2.head62
e_2.head62:
  %e_2.66 = phi i64 [ 0, %e_1.exit52 ], [ %n67, %e_2.latch64 ]
  %t68 = icmp slt i64 %e_2.66, 9
  br i1 %t68, label %e_2.body63, label %e_2.exit65
e_2.body63:
  %t69 = mul i64 0, 578
  %t70 = add i64 %t69, %e_2.66
  %t71 = mul i64 %ih.40, 34
  %t72 = add i64 %t70, %t71
  %t73 = add i64 %t72, 59
  %p74 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t73
  store float 0xFFF0000000000000, ptr %p74, align 4
  br label %e_2.latch64
e_2.latch64:
  %n67 = add nuw nsw i64 %e_2.66, 1
  br label %e_2.head62, !llvm.loop !9
e_2.exit65:
  br label %t.head75
t.head75:
  %t.79 = phi i64 [ 0, %e_2.exit65 ], [ %n80, %t.latch77 ]
  %t81 = icmp slt i64 %t.79, 7
  br i1 %t81, label %t.body76, label %t.exit78
t.body76:
  %t82 = mul i64 0, 225
  %t83 = mul i64 %ih.40, 15
  %t84 = add i64 %t82, %t83
  %t85 = mul i64 %nc_i.12, 225
  %t86 = add i64 %t84, %t85
  %t87 = mul i64 %nc_o.5, 900
  %t88 = add i64 %t86, %t87
  %t89 = mul i64 %t.79, 2
  %t90 = add i64 %t88, %t89
  %p91 = getelementptr inbounds float, ptr %param.1, i64 %t90
  %v92 = load float, ptr %p91, align 4
  %t93 = mul i64 0, 578
  %t94 = mul i64 %ih.40, 34
  %t95 = add i64 %t93, %t94
  %t96 = add i64 %t95, %t.79
  %t97 = add i64 %t96, 51
  %p98 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t97
  store float %v92, ptr %p98, align 4
  %t99 = mul i64 0, 225
  %t100 = mul i64 %ih.40, 15
  %t101 = add i64 %t99, %t100
  %t102 = mul i64 %nc_i.12, 225
  %t103 = add i64 %t101, %t102
  %t104 = mul i64 %nc_o.5, 900
  %t105 = add i64 %t103, %t104
  %t106 = mul i64 %t.79, 2
  %t107 = add i64 %t105, %t106
  %t108 = add i64 %t107, 1
  %p109 = getelementptr inbounds float, ptr %param.1, i64 %t108
  %v110 = load float, ptr %p109, align 4
  %t111 = mul i64 0, 578
  %t112 = mul i64 %ih.40, 34
  %t113 = add i64 %t111, %t112
  %t114 = add i64 %t113, %t.79
  %t115 = add i64 %t114, 35
  %p116 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t115
  store float %v110, ptr %p116, align 4
  br label %t.latch77
t.latch77:
  %n80 = add nuw nsw i64 %t.79, 1
  br label %t.head75, !llvm.loop !12
t.exit78:
  %t117 = mul i64 0, 225
  %t118 = mul i64 %ih.40, 15
  %t119 = add i64 %t117, %t118
  %t120 = mul i64 %nc_i.12, 225
  %t121 = add i64 %t119, %t120
  %t122 = mul i64 %nc_o.5, 900
  %t123 = add i64 %t121, %t122
  %t124 = mul i64 0, 2
  %t125 = add i64 %t123, %t124
  %t126 = add i64 %t125, 14
  %p127 = getelementptr inbounds float, ptr %param.1, i64 %t126
  %v128 = load float, ptr %p127, align 4
  %t129 = mul i64 0, 578
  %t130 = mul i64 %ih.40, 34
  %t131 = add i64 %t129, %t130
  %t132 = add i64 %t131, 0
  %t133 = add i64 %t132, 58
  %p134 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t133
  store float %v128, ptr %p134, align 4
  br label %ih.latch38
ih.latch38:
  %n41 = add nuw nsw i64 %ih.40, 1
  br label %ih.head36, !llvm.loop !16
ih.exit39:
  br label %oh.head135
oh.head135:
  %oh.139 = phi i64 [ 0, %ih.exit39 ], [ %n140, %oh.latch137 ]
  %t141 = icmp slt i64 %oh.139, 8
  br i1 %t141, label %oh.body136, label %oh.exit138
oh.body136:
  br label %ow.head142
ow.head142:
  %ow.146 = phi i64 [ 0, %oh.body136 ], [ %n147, %ow.latch144 ]
  %t148 = icmp slt i64 %ow.146, 16
  br i1 %t148, label %ow.body143, label %ow.exit145
ow.body143:
  %p149 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow.146
  store float 0xFFF0000000000000, ptr %p149, align 4
  br label %ow.latch144
ow.latch144:
  %n147 = add nuw nsw i64 %ow.146, 1
  br label %ow.head142, !llvm.loop !19
ow.exit145:
  br label %ow_1.head150
ow_1.head150:
  %ow_1.154 = phi i64 [ 0, %ow.exit145 ], [ %n155, %ow_1.latch152 ]
  %t156 = icmp slt i64 %ow_1.154, 16
  br i1 %t156, label %ow_1.body151, label %ow_1.exit153
ow_1.body151:
  %p157 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  %v158 = load float, ptr %p157, align 4
  %t159 = mul i64 0, 34
  %t160 = mul i64 0, 17
  %t161 = add i64 %t159, %t160
  %t162 = mul i64 %oh.139, 68
  %t163 = add i64 %t161, %t162
  %t164 = add i64 %t163, %ow_1.154
  %p165 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t164
  %v166 = load float, ptr %p165, align 4
  %t167 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v158, float %v166)
  %p168 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  store float %t167, ptr %p168, align 4
  %p169 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  %v170 = load float, ptr %p169, align 4
  %t171 = mul i64 0, 34
  %t172 = mul i64 1, 17
  %t173 = add i64 %t171, %t172
  %t174 = mul i64 %oh.139, 68
  %t175 = add i64 %t173, %t174
  %t176 = add i64 %t175, %ow_1.154
  %p177 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t176
  %v178 = load float, ptr %p177, align 4
  %t179 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v170, float %v178)
  %p180 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  store float %t179, ptr %p180, align 4
  %p181 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  %v182 = load float, ptr %p181, align 4
  %t183 = mul i64 0, 34
  %t184 = mul i64 %oh.139, 68
  %t185 = add i64 %t183, %t184
  %r187 = srem i64 2, 2
  %t188 = mul i64 %r187, 17
  %t189 = add i64 %t185, %t188
  %t190 = add i64 %t189, %ow_1.154
  %q191 = sdiv i64 2, 2
  %t193 = add i64 %t190, %q191
  %p194 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t193
  %v195 = load float, ptr %p194, align 4
  %t196 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v182, float %v195)
  %p197 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  store float %t196, ptr %p197, align 4
  %p198 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  %v199 = load float, ptr %p198, align 4
  %t200 = mul i64 1, 34
  %t201 = mul i64 0, 17
  %t202 = add i64 %t200, %t201
  %t203 = mul i64 %oh.139, 68
  %t204 = add i64 %t202, %t203
  %t205 = add i64 %t204, %ow_1.154
  %p206 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t205
  %v207 = load float, ptr %p206, align 4
  %t208 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v199, float %v207)
  %p209 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  store float %t208, ptr %p209, align 4
  %p210 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  %v211 = load float, ptr %p210, align 4
  %t212 = mul i64 1, 34
  %t213 = mul i64 1, 17
  %t214 = add i64 %t212, %t213
  %t215 = mul i64 %oh.139, 68
  %t216 = add i64 %t214, %t215
  %t217 = add i64 %t216, %ow_1.154
  %p218 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t217
  %v219 = load float, ptr %p218, align 4
  %t220 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v211, float %v219)
  %p221 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  store float %t220, ptr %p221, align 4
  %p222 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  %v223 = load float, ptr %p222, align 4
  %t224 = mul i64 1, 34
  %t225 = mul i64 %oh.139, 68
  %t226 = add i64 %t224, %t225
  %r228 = srem i64 2, 2
  %t229 = mul i64 %r228, 17
  %t230 = add i64 %t226, %t229
  %t231 = add i64 %t230, %ow_1.154
  %q232 = sdiv i64 2, 2
  %t234 = add i64 %t231, %q232
  %p235 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t234
  %v236 = load float, ptr %p235, align 4
  %t237 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v223, float %v236)
  %p238 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  store float %t237, ptr %p238, align 4
  %p239 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  %v240 = load float, ptr %p239, align 4
  %t241 = mul i64 2, 34
  %t242 = mul i64 0, 17
  %t243 = add i64 %t241, %t242
  %t244 = mul i64 %oh.139, 68
  %t245 = add i64 %t243, %t244
  %t246 = add i64 %t245, %ow_1.154
  %p247 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t246
  %v248 = load float, ptr %p247, align 4
  %t249 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v240, float %v248)
  %p250 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  store float %t249, ptr %p250, align 4
  %p251 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  %v252 = load float, ptr %p251, align 4
  %t253 = mul i64 2, 34
  %t254 = mul i64 1, 17
  %t255 = add i64 %t253, %t254
  %t256 = mul i64 %oh.139, 68
  %t257 = add i64 %t255, %t256
  %t258 = add i64 %t257, %ow_1.154
  %p259 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t258
  %v260 = load float, ptr %p259, align 4
  %t261 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v252, float %v260)
  %p262 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  store float %t261, ptr %p262, align 4
  %p263 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  %v264 = load float, ptr %p263, align 4
  %t265 = mul i64 2, 34
  %t266 = mul i64 %oh.139, 68
  %t267 = add i64 %t265, %t266
  %r269 = srem i64 2, 2
  %t270 = mul i64 %r269, 17
  %t271 = add i64 %t267, %t270
  %t272 = add i64 %t271, %ow_1.154
  %q273 = sdiv i64 2, 2
  %t275 = add i64 %t272, %q273
  %p276 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t275
  %v277 = load float, ptr %p276, align 4
  %t278 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v264, float %v277)
  %p279 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.154
  store float %t278, ptr %p279, align 4
  br label %ow_1.latch152
ow_1.latch152:
  %n155 = add nuw nsw i64 %ow_1.154, 1
  br label %ow_1.head150, !llvm.loop !22
ow_1.exit153:
  br label %ow_2.head280
ow_2.head280:
  %ow_2.284 = phi i64 [ 0, %ow_1.exit153 ], [ %n285, %ow_2.latch282 ]
  %t286 = icmp slt i64 %ow_2.284, 8
  br i1 %t286, label %ow_2.body281, label %ow_2.exit283
ow_2.body281:
  %p287 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_2.284
  %v288 = load float, ptr %p287, align 4
  %t289 = mul i64 %nc_i.12, 64
  %t290 = mul i64 %nc_o.5, 256
  %t291 = add i64 %t289, %t290
  %t292 = mul i64 %oh.139, 8
  %t293 = add i64 %t291, %t292
  %t294 = add i64 %t293, %ow_2.284
  %p295 = getelementptr inbounds float, ptr %param.0, i64 %t294
  store float %v288, ptr %p295, align 4
  br label %ow_2.latch282
ow_2.latch282:
  %n285 = add nuw nsw i64 %ow_2.284, 1
  br label %ow_2.head280, !llvm.loop !25
ow_2.exit283:
  br label %oh.latch137
oh.latch137:
  %n140 = add nuw nsw i64 %oh.139, 1
  br label %oh.head135, !llvm.loop !28
oh.exit138:
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
