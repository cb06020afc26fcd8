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
  br label %ih.latch38
ih.latch38:
  %n41 = add nuw nsw i64 %ih.40, 1
  br label %ih.head36, !llvm.loop !6
ih.exit39:
  br label %ih_1.head49
ih_1.head49:
  %ih_1.53 = phi i64 [ 0, %ih.exit39 ], [ %n54, %ih_1.latch51 ]
  %t55 = icmp slt i64 %ih_1.53, 15
  br i1 %t55, label %ih_1.body50, label %ih_1.exit52
ih_1.body50:
  br label %e_1.head56
e_1.head56:
  %e_1.60 = phi i64 [ 0, %ih_1.body50 ], [ %n61, %e_1.latch58 ]
  %t62 = icmp slt i64 %e_1.60, 9
  br i1 %t62, label %e_1.body57, label %e_1.exit59
e_1.body57:
  %t63 = mul i64 0, 578
  %t64 = add i64 %t63, %e_1.60
  %t65 = mul i64 %ih_1.53, 34
  %t66 = add i64 %t64, %t65
  %t67 = add i64 %t66, 42
  %p68 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t67
  store float 0xFFF0000000000000, ptr %p68, align 4
  br label %e_1.latch58
e_1.latch58:
  %n61 = add nuw nsw i64 %e_1.60, 1
  br label %e_1.head56, !llvm.loop !9
e_1.exit59:
  br label %ih_1.latch51
ih_1.latch51:
  %n54 = add nuw nsw i64 %ih_1.53, 1
  br label %ih_1.head49, !llvm.loop !12
ih_1.exit52:
  br label %ih_2.head69
ih_2.head69:
  %ih_2.73 = phi i64 [ 0, %ih_1.exit52 ], [ %n74, %ih_2.latch71 ]
  %t75 = icmp slt i64 %ih_2.73, 15
  br i1 %t75, label %ih_2.body70, label %ih_2.exit72
ih_2.body70:
  br label %e_2.head76
e_2.head76:
  %e_2.80 = phi i64 [ 0, %ih_2.body70 ], [ %n81, %e_2.latch78 ]
  %t82 = icmp slt i64 %e_2.80, 9
  br i1 %t82, label %e_2.body77, label %e_2.exit79
e_2.body77:
  %t83 = mul i64 0, 578
  %t84 = add i64 %t83, %e_2.80
  %t85 = mul i64 %ih_2.73, 34
  %t86 = add i64 %t84, %t85
  %t87 = add i64 %t86, 59
  %p88 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t87
  store float 0xFFF0000000000000, ptr %p88, align 4
  br label %e_2.latch78
e_2.latch78:
  %n81 = add nuw nsw i64 %e_2.80, 1
  br label %e_2.head76, !llvm.loop !15
e_2.exit79:
  br label %ih_2.latch71
ih_2.latch71:
  %n74 = add nuw nsw i64 %ih_2.73, 1
  br label %ih_2.head69, !llvm.loop !18
ih_2.exit72:
  br label %ih_3.head89
ih_3.head89:
  %ih_3.93 = phi i64 [ 0, %ih_2.exit72 ], [ %n94, %ih_3.latch91 ]
  %t95 = icmp slt i64 %ih_3.93, 15
  br i1 %t95, label %ih_3.body90, label %ih_3.exit92
ih_3.body90:
  br label %t.head96
t.head96:
  %t.100 = phi i64 [ 0, %ih_3.body90 ], [ %n101, %t.latch98 ]
  %t102 = icmp slt i64 %t.100, 7
  br i1 %t102, label %t.body97, label %t.exit99
t.body97:
  %t103 = mul i64 0, 225
  %t104 = mul i64 %ih_3.93, 15
  %t105 = add i64 %t103, %t104
  %t106 = mul i64 %nc_i.12, 225
  %t107 = add i64 %t105, %t106
  %t108 = mul i64 %nc_o.5, 900
  %t109 = add i64 %t107, %t108
  %t110 = mul i64 %t.100, 2
  %t111 = add i64 %t109, %t110
  %t112 = add i64 %t111, 1
  %p113 = getelementptr inbounds float, ptr %param.1, i64 %t112
  %v114 = load float, ptr %p113, align 4
  %t115 = mul i64 0, 578
  %t116 = mul i64 %ih_3.93, 34
  %t117 = add i64 %t115, %t116
  %t118 = add i64 %t117, %t.100
  %t119 = add i64 %t118, 35
  %p120 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t119
  store float %v114, ptr %p120, align 4
  %t121 = mul i64 0, 225
  %t122 = mul i64 %ih_3.93, 15
  %t123 = add i64 %t121, %t122
  %t124 = mul i64 %nc_i.12, 225
  %t125 = add i64 %t123, %t124
  %t126 = mul i64 %nc_o.5, 900
  %t127 = add i64 %t125, %t126
  %t128 = mul i64 %t.100, 2
  %t129 = add i64 %t127, %t128
  %t130 = add i64 %t129, 2
  %p131 = getelementptr inbounds float, ptr %param.1, i64 %t130
  %v132 = load float, ptr %p131, align 4
  %t133 = mul i64 0, 578
  %t134 = mul i64 %ih_3.93, 34
  %t135 = add i64 %t133, %t134
  %t136 = add i64 %t135, %t.100
  %t137 = add i64 %t136, 52
  %p138 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t137
  store float %v132, ptr %p138, align 4
  br label %t.latch98
t.latch98:
  %n101 = add nuw nsw i64 %t.100, 1
  br label %t.head96, !llvm.loop !21
t.exit99:
  br label %ih_3.latch91
ih_3.latch91:
  %n94 = add nuw nsw i64 %ih_3.93, 1
  br label %ih_3.head89, !llvm.loop !25
ih_3.exit92:
  br label %ih_4.head139
ih_4.head139:
  %ih_4.143 = phi i64 [ 0, %ih_3.exit92 ], [ %n144, %ih_4.latch141 ]
  %t145 = icmp slt i64 %ih_4.143, 15
  br i1 %t145, label %ih_4.body140, label %ih_4.exit142
ih_4.body140:
  %t146 = mul i64 0, 225
  %t147 = mul i64 %ih_4.143, 15
  %t148 = add i64 %t146, %t147
  %t149 = mul i64 %nc_i.12, 225
  %t150 = add i64 %t148, %t149
  %t151 = mul i64 %nc_o.5, 900
  %t152 = add i64 %t150, %t151
  %t153 = mul i64 0, 2
  %t154 = add i64 %t152, %t153
  %p155 = getelementptr inbounds float, ptr %param.1, i64 %t154
  %v156 = load float, ptr %p155, align 4
  %t157 = mul i64 0, 578
  %t158 = mul i64 %ih_4.143, 34
  %t159 = add i64 %t157, %t158
  %t160 = add i64 %t159, 0
  %t161 = add i64 %t160, 51
  %p162 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t161
  store float %v156, ptr %p162, align 4
  br label %ih_4.latch141
ih_4.latch141:
  %n144 = add nuw nsw i64 %ih_4.143, 1
  br label %ih_4.head139, !llvm.loop !27
ih_4.exit142:
  br label %oh.head163
oh.head163:
  %oh.167 = phi i64 [ 0, %ih_4.exit142 ], [ %n168, %oh.latch165 ]
  %t169 = icmp slt i64 %oh.167, 8
  br i1 %t169, label %oh.body164, label %oh.exit166
oh.body164:
  br label %ow.head170
ow.head170:
  %ow.174 = phi i64 [ 0, %oh.body164 ], [ %n175, %ow.latch172 ]
  %t176 = icmp slt i64 %ow.174, 16
  br i1 %t176, label %ow.body171, label %ow.exit173
ow.body171:
  %p177 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow.174
  store float 0xFFF0000000000000, ptr %p177, align 4
  br label %ow.latch172
ow.latch172:
  %n175 = add nuw nsw i64 %ow.174, 1
  br label %ow.head170, !llvm.loop !29
ow.exit173:
  br label %ow_1.head178
ow_1.head178:
  %ow_1.182 = phi i64 [ 0, %ow.exit173 ], [ %n183, %ow_1.latch180 ]
  %t184 = icmp slt i64 %ow_1.182, 16
  br i1 %t184, label %ow_1.body179, label %ow_1.exit181
ow_1.body179:
  %p185 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  %v186 = load float, ptr %p185, align 4
  %t187 = mul i64 0, 34
  %t188 = mul i64 0, 17
  %t189 = add i64 %t187, %t188
  %t190 = mul i64 %oh.167, 68
  %t191 = add i64 %t189, %t190
  %t192 = add i64 %t191, %ow_1.182
  %p193 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t192
  %v194 = load float, ptr %p193, align 4
  %t195 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v186, float %v194)
  %p196 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  store float %t195, ptr %p196, align 4
  %p197 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  %v198 = load float, ptr %p197, align 4
  %t199 = mul i64 0, 34
  %t200 = mul i64 1, 17
  %t201 = add i64 %t199, %t200
  %t202 = mul i64 %oh.167, 68
  %t203 = add i64 %t201, %t202
  %t204 = add i64 %t203, %ow_1.182
  %p205 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t204
  %v206 = load float, ptr %p205, align 4
  %t207 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v198, float %v206)
  %p208 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  store float %t207, ptr %p208, align 4
  %p209 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  %v210 = load float, ptr %p209, align 4
  %t211 = mul i64 0, 34
  %t212 = mul i64 %oh.167, 68
  %t213 = add i64 %t211, %t212
  %r215 = srem i64 2, 2
  %t216 = mul i64 %r215, 17
  %t217 = add i64 %t213, %t216
  %t218 = add i64 %t217, %ow_1.182
  %q219 = sdiv i64 2, 2
  %t221 = add i64 %t218, %q219
  %p222 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t221
  %v223 = load float, ptr %p222, align 4
  %t224 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v210, float %v223)
  %p225 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  store float %t224, ptr %p225, align 4
  %p226 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  %v227 = load float, ptr %p226, align 4
  %t228 = mul i64 1, 34
  %t229 = mul i64 0, 17
  %t230 = add i64 %t228, %t229
  %t231 = mul i64 %oh.167, 68
  %t232 = add i64 %t230, %t231
  %t233 = add i64 %t232, %ow_1.182
  %p234 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t233
  %v235 = load float, ptr %p234, align 4
  %t236 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v227, float %v235)
  %p237 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  store float %t236, ptr %p237, align 4
  %p238 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  %v239 = load float, ptr %p238, align 4
  %t240 = mul i64 1, 34
  %t241 = mul i64 1, 17
  %t242 = add i64 %t240, %t241
  %t243 = mul i64 %oh.167, 68
  %t244 = add i64 %t242, %t243
  %t245 = add i64 %t244, %ow_1.182
  %p246 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t245
  %v247 = load float, ptr %p246, align 4
  %t248 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v239, float %v247)
  %p249 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  store float %t248, ptr %p249, align 4
  %p250 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  %v251 = load float, ptr %p250, align 4
  %t252 = mul i64 1, 34
  %t253 = mul i64 %oh.167, 68
  %t254 = add i64 %t252, %t253
  %r256 = srem i64 2, 2
  %t257 = mul i64 %r256, 17
  %t258 = add i64 %t254, %t257
  %t259 = add i64 %t258, %ow_1.182
  %q260 = sdiv i64 2, 2
  %t262 = add i64 %t259, %q260
  %p263 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t262
  %v264 = load float, ptr %p263, align 4
  %t265 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v251, float %v264)
  %p266 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  store float %t265, ptr %p266, align 4
  %p267 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  %v268 = load float, ptr %p267, align 4
  %t269 = mul i64 2, 34
  %t270 = mul i64 0, 17
  %t271 = add i64 %t269, %t270
  %t272 = mul i64 %oh.167, 68
  %t273 = add i64 %t271, %t272
  %t274 = add i64 %t273, %ow_1.182
  %p275 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t274
  %v276 = load float, ptr %p275, align 4
  %t277 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v268, float %v276)
  %p278 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  store float %t277, ptr %p278, align 4
  %p279 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  %v280 = load float, ptr %p279, align 4
  %t281 = mul i64 2, 34
  %t282 = mul i64 1, 17
  %t283 = add i64 %t281, %t282
  %t284 = mul i64 %oh.167, 68
  %t285 = add i64 %t283, %t284
  %t286 = add i64 %t285, %ow_1.182
  %p287 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t286
  %v288 = load float, ptr %p287, align 4
  %t289 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v280, float %v288)
  %p290 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  store float %t289, ptr %p290, align 4
  %p291 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  %v292 = load float, ptr %p291, align 4
  %t293 = mul i64 2, 34
  %t294 = mul i64 %oh.167, 68
  %t295 = add i64 %t293, %t294
  %r297 = srem i64 2, 2
  %t298 = mul i64 %r297, 17
  %t299 = add i64 %t295, %t298
  %t300 = add i64 %t299, %ow_1.182
  %q301 = sdiv i64 2, 2
  %t303 = add i64 %t300, %q301
  %p304 = getelementptr inbounds float, ptr %l.maxpool2d0_xpad, i64 %t303
  %v305 = load float, ptr %p304, align 4
  %t306 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v292, float %v305)
  %p307 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_1.182
  store float %t306, ptr %p307, align 4
  br label %ow_1.latch180
ow_1.latch180:
  %n183 = add nuw nsw i64 %ow_1.182, 1
  br label %ow_1.head178, !llvm.loop !32
ow_1.exit181:
  br label %ow_2.head308
ow_2.head308:
  %ow_2.312 = phi i64 [ 0, %ow_1.exit181 ], [ %n313, %ow_2.latch310 ]
  %t314 = icmp slt i64 %ow_2.312, 8
  br i1 %t314, label %ow_2.body309, label %ow_2.exit311
ow_2.body309:
  %p315 = getelementptr inbounds float, ptr %l.maxpool2d0_acc, i64 %ow_2.312
  %v316 = load float, ptr %p315, align 4
  %t317 = mul i64 %nc_i.12, 64
  %t318 = mul i64 %nc_o.5, 256
  %t319 = add i64 %t317, %t318
  %t320 = mul i64 %oh.167, 8
  %t321 = add i64 %t319, %t320
  %t322 = add i64 %t321, %ow_2.312
  %p323 = getelementptr inbounds float, ptr %param.0, i64 %t322
  store float %v316, ptr %p323, align 4
  br label %ow_2.latch310
ow_2.latch310:
  %n313 = add nuw nsw i64 %ow_2.312, 1
  br label %ow_2.head308, !llvm.loop !35
ow_2.exit311:
  br label %oh.latch165
oh.latch165:
  %n168 = add nuw nsw i64 %oh.167, 1
  br label %oh.head163, !llvm.loop !38
oh.exit166:
  br label %nc_i.latch10
nc_i.latch10:
  %n13 = add nuw nsw i64 %nc_i.12, 1
  br label %nc_i.head8, !llvm.loop !41
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
