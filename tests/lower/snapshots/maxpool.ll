declare i64 @llvm.smax.i64(i64, i64)

declare float @llvm.maximum.f32(float, float)

declare i64 @llvm.smin.i64(i64, i64)

define internal void @maxpool.body(ptr noalias nocapture align 4 %param.0, ptr noalias nocapture align 4 %param.1, i64 %lo, i64 %hi) nounwind {
entry:
  ; stage maxpool2d1
  br label %c.head1
c.head1:
  %c.5 = phi i64 [ 0, %entry ], [ %n6, %c.latch3 ]
  %t7 = icmp slt i64 %c.5, 8
  br i1 %t7, label %c.body2, label %c.exit4
c.body2:
  br label %oh.head8
oh.head8:
  %oh.12 = phi i64 [ 0, %c.body2 ], [ %n13, %oh.latch10 ]
  %t14 = icmp slt i64 %oh.12, 8
  br i1 %t14, label %oh.body9, label %oh.exit11
oh.body9:
  br label %ow.head15
ow.head15:
  %ow.19 = phi i64 [ 0, %oh.body9 ], [ %n20, %ow.latch17 ]
  %t21 = icmp slt i64 %ow.19, 8
  br i1 %t21, label %ow.body16, label %ow.exit18
ow.body16:
  %t22 = mul i64 %c.5, 64
  %t23 = mul i64 0, 512
  %t24 = add i64 %t22, %t23
  %t25 = mul i64 %oh.12, 8
  %t26 = add i64 %t24, %t25
  %t27 = add i64 %t26, %ow.19
  %p28 = getelementptr inbounds float, ptr %param.0, i64 %t27
  store float 0xFFF0000000000000, ptr %p28, align 4
  %t29 = mul i64 %c.5, 64
  %t30 = mul i64 0, 512
  %t31 = add i64 %t29, %t30
  %t32 = mul i64 %oh.12, 8
  %t33 = add i64 %t31, %t32
  %t34 = add i64 %t33, %ow.19
  %p35 = getelementptr inbounds float, ptr %param.0, i64 %t34
  %v36 = load float, ptr %p35, align 4
  %t37 = mul i64 %oh.12, 2
  %t38 = add i64 0, %t37
  %t39 = sub i64 %t38, 1
  %t40 = icmp sge i64 %t39, 0
  %t41 = mul i64 %oh.12, 2
  %t42 = add i64 0, %t41
  %t43 = sub i64 %t42, 1
  %t44 = icmp slt i64 %t43, 15
  %t45 = and i1 %t40, %t44
  %t46 = mul i64 %ow.19, 2
  %t47 = add i64 0, %t46
  %t48 = sub i64 %t47, 1
  %t49 = icmp sge i64 %t48, 0
  %t50 = mul i64 %ow.19, 2
  %t51 = add i64 0, %t50
  %t52 = sub i64 %t51, 1
  %t53 = icmp slt i64 %t52, 15
  %t54 = and i1 %t49, %t53
  %t55 = and i1 %t45, %t54
  %t56 = mul i64 %c.5, 225
  %t57 = mul i64 0, 1800
  %t58 = add i64 %t56, %t57
  %t59 = mul i64 %oh.12, 2
  %t60 = add i64 0, %t59
  %t61 = sub i64 %t60, 1
  %t62 = call i64 @llvm.smax.i64(i64 %t61, i64 0)
  %t63 = mul i64 %t62, 15
  %t64 = add i64 %t58, %t63
  %t65 = mul i64 %ow.19, 2
  %t66 = add i64 0, %t65
  %t67 = sub i64 %t66, 1
  %t68 = call i64 @llvm.smax.i64(i64 %t67, i64 0)
  %t69 = add i64 %t64, %t68
  %p70 = getelementptr inbounds float, ptr %param.1, i64 %t69
  %v71 = load float, ptr %p70, align 4
  %s72 = select i1 %t55, float %v71, float 0xFFF0000000000000
  %t73 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v36, float %s72)
  %t74 = mul i64 %c.5, 64
  %t75 = mul i64 0, 512
  %t76 = add i64 %t74, %t75
  %t77 = mul i64 %oh.12, 8
  %t78 = add i64 %t76, %t77
  %t79 = add i64 %t78, %ow.19
  %p80 = getelementptr inbounds float, ptr %param.0, i64 %t79
  store float %t73, ptr %p80, align 4
  %t81 = mul i64 %c.5, 64
  %t82 = mul i64 0, 512
  %t83 = add i64 %t81, %t82
  %t84 = mul i64 %oh.12, 8
  %t85 = add i64 %t83, %t84
  %t86 = add i64 %t85, %ow.19
  %p87 = getelementptr inbounds float, ptr %param.0, i64 %t86
  %v88 = load float, ptr %p87, align 4
  %t89 = mul i64 %oh.12, 2
  %t90 = add i64 0, %t89
  %t91 = sub i64 %t90, 1
  %t92 = icmp sge i64 %t91, 0
  %t93 = mul i64 %oh.12, 2
  %t94 = add i64 0, %t93
  %t95 = sub i64 %t94, 1
  %t96 = icmp slt i64 %t95, 15
  %t97 = and i1 %t92, %t96
  %t98 = mul i64 %ow.19, 2
  %t99 = add i64 1, %t98
  %t100 = sub i64 %t99, 1
  %t101 = icmp sge i64 %t100, 0
  %t102 = mul i64 %ow.19, 2
  %t103 = add i64 1, %t102
  %t104 = sub i64 %t103, 1
  %t105 = icmp slt i64 %t104, 15
  %t106 = and i1 %t101, %t105
  %t107 = and i1 %t97, %t106
  %t108 = mul i64 %c.5, 225
  %t109 = mul i64 0, 1800
  %t110 = add i64 %t108, %t109
  %t111 = mul i64 %oh.12, 2
  %t112 = add i64 0, %t111
  %t113 = sub i64 %t112, 1
  %t114 = call i64 @llvm.smax.i64(i64 %t113, i64 0)
  %t115 = mul i64 %t114, 15
  %t116 = add i64 %t110, %t115
  %t117 = mul i64 %ow.19, 2
  %t118 = add i64 1, %t117
  %t119 = sub i64 %t118, 1
  %t120 = add i64 %t116, %t119
  %p121 = getelementptr inbounds float, ptr %param.1, i64 %t120
  %v122 = load float, ptr %p121, align 4
  %s123 = select i1 %t107, float %v122, float 0xFFF0000000000000
  %t124 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v88, float %s123)
  %t125 = mul i64 %c.5, 64
  %t126 = mul i64 0, 512
  %t127 = add i64 %t125, %t126
  %t128 = mul i64 %oh.12, 8
  %t129 = add i64 %t127, %t128
  %t130 = add i64 %t129, %ow.19
  %p131 = getelementptr inbounds float, ptr %param.0, i64 %t130
  store float %t124, ptr %p131, align 4
  %t132 = mul i64 %c.5, 64
  %t133 = mul i64 0, 512
  %t134 = add i64 %t132, %t133
  %t135 = mul i64 %oh.12, 8
  %t136 = add i64 %t134, %t135
  %t137 = add i64 %t136, %ow.19
  %p138 = getelementptr inbounds float, ptr %param.0, i64 %t137
  %v139 = load float, ptr %p138, align 4
  %t140 = mul i64 %oh.12, 2
  %t141 = add i64 0, %t140
  %t142 = sub i64 %t141, 1
  %t143 = icmp sge i64 %t142, 0
  %t144 = mul i64 %oh.12, 2
  %t145 = add i64 0, %t144
  %t146 = sub i64 %t145, 1
  %t147 = icmp slt i64 %t146, 15
  %t148 = and i1 %t143, %t147
  %t149 = mul i64 %ow.19, 2
  %t150 = add i64 2, %t149
  %t151 = sub i64 %t150, 1
  %t152 = icmp sge i64 %t151, 0
  %t153 = mul i64 %ow.19, 2
  %t154 = add i64 2, %t153
  %t155 = sub i64 %t154, 1
  %t156 = icmp slt i64 %t155, 15
  %t157 = and i1 %t152, %t156
  %t158 = and i1 %t148, %t157
  %t159 = mul i64 %c.5, 225
  %t160 = mul i64 0, 1800
  %t161 = add i64 %t159, %t160
  %t162 = mul i64 %oh.12, 2
  %t163 = add i64 0, %t162
  %t164 = sub i64 %t163, 1
  %t165 = call i64 @llvm.smax.i64(i64 %t164, i64 0)
  %t166 = mul i64 %t165, 15
  %t167 = add i64 %t161, %t166
  %t168 = mul i64 %ow.19, 2
  %t169 = add i64 2, %t168
  %t170 = sub i64 %t169, 1
  %t171 = call i64 @llvm.smin.i64(i64 %t170, i64 14)
  %t172 = add i64 %t167, %t171
  %p173 = getelementptr inbounds float, ptr %param.1, i64 %t172
  %v174 = load float, ptr %p173, align 4
  %s175 = select i1 %t158, float %v174, float 0xFFF0000000000000
  %t176 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v139, float %s175)
  %t177 = mul i64 %c.5, 64
  %t178 = mul i64 0, 512
  %t179 = add i64 %t177, %t178
  %t180 = mul i64 %oh.12, 8
  %t181 = add i64 %t179, %t180
  %t182 = add i64 %t181, %ow.19
  %p183 = getelementptr inbounds float, ptr %param.0, i64 %t182
  store float %t176, ptr %p183, align 4
  %t184 = mul i64 %c.5, 64
  %t185 = mul i64 0, 512
  %t186 = add i64 %t184, %t185
  %t187 = mul i64 %oh.12, 8
  %t188 = add i64 %t186, %t187
  %t189 = add i64 %t188, %ow.19
  %p190 = getelementptr inbounds float, ptr %param.0, i64 %t189
  %v191 = load float, ptr %p190, align 4
  %t192 = mul i64 %oh.12, 2
  %t193 = add i64 1, %t192
  %t194 = sub i64 %t193, 1
  %t195 = icmp sge i64 %t194, 0
  %t196 = mul i64 %oh.12, 2
  %t197 = add i64 1, %t196
  %t198 = sub i64 %t197, 1
  %t199 = icmp slt i64 %t198, 15
  %t200 = and i1 %t195, %t199
  %t201 = mul i64 %ow.19, 2
  %t202 = add i64 0, %t201
  %t203 = sub i64 %t202, 1
  %t204 = icmp sge i64 %t203, 0
  %t205 = mul i64 %ow.19, 2
  %t206 = add i64 0, %t205
  %t207 = sub i64 %t206, 1
  %t208 = icmp slt i64 %t207, 15
  %t209 = and i1 %t204, %t208
  %t210 = and i1 %t200, %t209
  %t211 = mul i64 %c.5, 225
  %t212 = mul i64 1, 15
  %t213 = add i64 %t211, %t212
  %t214 = mul i64 0, 1800
  %t215 = add i64 %t213, %t214
  %t216 = mul i64 %oh.12, 30
  %t217 = add i64 %t215, %t216
  %t218 = sub i64 %t217, 15
  %t219 = mul i64 %ow.19, 2
  %t220 = add i64 0, %t219
  %t221 = sub i64 %t220, 1
  %t222 = call i64 @llvm.smax.i64(i64 %t221, i64 0)
  %t223 = add i64 %t218, %t222
  %p224 = getelementptr inbounds float, ptr %param.1, i64 %t223
  %v225 = load float, ptr %p224, align 4
  %s226 = select i1 %t210, float %v225, float 0xFFF0000000000000
  %t227 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v191, float %s226)
  %t228 = mul i64 %c.5, 64
  %t229 = mul i64 0, 512
  %t230 = add i64 %t228, %t229
  %t231 = mul i64 %oh.12, 8
  %t232 = add i64 %t230, %t231
  %t233 = add i64 %t232, %ow.19
  %p234 = getelementptr inbounds float, ptr %param.0, i64 %t233
  store float %t227, ptr %p234, align 4
  %t235 = mul i64 %c.5, 64
  %t236 = mul i64 0, 512
  %t237 = add i64 %t235, %t236
  %t238 = mul i64 %oh.12, 8
  %t239 = add i64 %t237, %t238
  %t240 = add i64 %t239, %ow.19
  %p241 = getelementptr inbounds float, ptr %param.0, i64 %t240
  %v242 = load float, ptr %p241, align 4
  %t243 = mul i64 %oh.12, 2
  %t244 = add i64 1, %t243
  %t245 = sub i64 %t244, 1
  %t246 = icmp sge i64 %t245, 0
  %t247 = mul i64 %oh.12, 2
  %t248 = add i64 1, %t247
  %t249 = sub i64 %t248, 1
  %t250 = icmp slt i64 %t249, 15
  %t251 = and i1 %t246, %t250
  %t252 = mul i64 %ow.19, 2
  %t253 = add i64 1, %t252
  %t254 = sub i64 %t253, 1
  %t255 = icmp sge i64 %t254, 0
  %t256 = mul i64 %ow.19, 2
  %t257 = add i64 1, %t256
  %t258 = sub i64 %t257, 1
  %t259 = icmp slt i64 %t258, 15
  %t260 = and i1 %t255, %t259
  %t261 = and i1 %t251, %t260
  %t262 = mul i64 %c.5, 225
  %t263 = mul i64 1, 15
  %t264 = add i64 %t262, %t263
  %t265 = add i64 %t264, 1
  %t266 = mul i64 0, 1800
  %t267 = add i64 %t265, %t266
  %t268 = mul i64 %oh.12, 30
  %t269 = add i64 %t267, %t268
  %t270 = mul i64 %ow.19, 2
  %t271 = add i64 %t269, %t270
  %t272 = sub i64 %t271, 16
  %p273 = getelementptr inbounds float, ptr %param.1, i64 %t272
  %v274 = load float, ptr %p273, align 4
  %s275 = select i1 %t261, float %v274, float 0xFFF0000000000000
  %t276 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v242, float %s275)
  %t277 = mul i64 %c.5, 64
  %t278 = mul i64 0, 512
  %t279 = add i64 %t277, %t278
  %t280 = mul i64 %oh.12, 8
  %t281 = add i64 %t279, %t280
  %t282 = add i64 %t281, %ow.19
  %p283 = getelementptr inbounds float, ptr %param.0, i64 %t282
  store float %t276, ptr %p283, align 4
  %t284 = mul i64 %c.5, 64
  %t285 = mul i64 0, 512
  %t286 = add i64 %t284, %t285
  %t287 = mul i64 %oh.12, 8
  %t288 = add i64 %t286, %t287
  %t289 = add i64 %t288, %ow.19
  %p290 = getelementptr inbounds float, ptr %param.0, i64 %t289
  %v291 = load float, ptr %p290, align 4
  %t292 = mul i64 %oh.12, 2
  %t293 = add i64 1, %t292
  %t294 = sub i64 %t293, 1
  %t295 = icmp sge i64 %t294, 0
  %t296 = mul i64 %oh.12, 2
  %t297 = add i64 1, %t296
  %t298 = sub i64 %t297, 1
  %t299 = icmp slt i64 %t298, 15
  %t300 = and i1 %t295, %t299
  %t301 = mul i64 %ow.19, 2
  %t302 = add i64 2, %t301
  %t303 = sub i64 %t302, 1
  %t304 = icmp sge i64 %t303, 0
  %t305 = mul i64 %ow.19, 2
  %t306 = add i64 2, %t305
  %t307 = sub i64 %t306, 1
  %t308 = icmp slt i64 %t307, 15
  %t309 = and i1 %t304, %t308
  %t310 = and i1 %t300, %t309
  %t311 = mul i64 %c.5, 225
  %t312 = mul i64 1, 15
  %t313 = add i64 %t311, %t312
  %t314 = mul i64 0, 1800
  %t315 = add i64 %t313, %t314
  %t316 = mul i64 %oh.12, 30
  %t317 = add i64 %t315, %t316
  %t318 = sub i64 %t317, 15
  %t319 = mul i64 %ow.19, 2
  %t320 = add i64 2, %t319
  %t321 = sub i64 %t320, 1
  %t322 = call i64 @llvm.smin.i64(i64 %t321, i64 14)
  %t323 = add i64 %t318, %t322
  %p324 = getelementptr inbounds float, ptr %param.1, i64 %t323
  %v325 = load float, ptr %p324, align 4
  %s326 = select i1 %t310, float %v325, float 0xFFF0000000000000
  %t327 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v291, float %s326)
  %t328 = mul i64 %c.5, 64
  %t329 = mul i64 0, 512
  %t330 = add i64 %t328, %t329
  %t331 = mul i64 %oh.12, 8
  %t332 = add i64 %t330, %t331
  %t333 = add i64 %t332, %ow.19
  %p334 = getelementptr inbounds float, ptr %param.0, i64 %t333
  store float %t327, ptr %p334, align 4
  %t335 = mul i64 %c.5, 64
  %t336 = mul i64 0, 512
  %t337 = add i64 %t335, %t336
  %t338 = mul i64 %oh.12, 8
  %t339 = add i64 %t337, %t338
  %t340 = add i64 %t339, %ow.19
  %p341 = getelementptr inbounds float, ptr %param.0, i64 %t340
  %v342 = load float, ptr %p341, align 4
  %t343 = mul i64 %oh.12, 2
  %t344 = add i64 2, %t343
  %t345 = sub i64 %t344, 1
  %t346 = icmp sge i64 %t345, 0
  %t347 = mul i64 %oh.12, 2
  %t348 = add i64 2, %t347
  %t349 = sub i64 %t348, 1
  %t350 = icmp slt i64 %t349, 15
  %t351 = and i1 %t346, %t350
  %t352 = mul i64 %ow.19, 2
  %t353 = add i64 0, %t352
  %t354 = sub i64 %t353, 1
  %t355 = icmp sge i64 %t354, 0
  %t356 = mul i64 %ow.19, 2
  %t357 = add i64 0, %t356
  %t358 = sub i64 %t357, 1
  %t359 = icmp slt i64 %t358, 15
  %t360 = and i1 %t355, %t359
  %t361 = and i1 %t351, %t360
  %t362 = mul i64 %c.5, 225
  %t363 = mul i64 0, 1800
  %t364 = add i64 %t362, %t363
  %t365 = mul i64 %oh.12, 2
  %t366 = add i64 2, %t365
  %t367 = sub i64 %t366, 1
  %t368 = call i64 @llvm.smin.i64(i64 %t367, i64 14)
  %t369 = mul i64 %t368, 15
  %t370 = add i64 %t364, %t369
  %t371 = mul i64 %ow.19, 2
  %t372 = add i64 0, %t371
  %t373 = sub i64 %t372, 1
  %t374 = call i64 @llvm.smax.i64(i64 %t373, i64 0)
  %t375 = add i64 %t370, %t374
  %p376 = getelementptr inbounds float, ptr %param.1, i64 %t375
  %v377 = load float, ptr %p376, align 4
  %s378 = select i1 %t361, float %v377, float 0xFFF0000000000000
  %t379 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v342, float %s378)
  %t380 = mul i64 %c.5, 64
  %t381 = mul i64 0, 512
  %t382 = add i64 %t380, %t381
  %t383 = mul i64 %oh.12, 8
  %t384 = add i64 %t382, %t383
  %t385 = add i64 %t384, %ow.19
  %p386 = getelementptr inbounds float, ptr %param.0, i64 %t385
  store float %t379, ptr %p386, align 4
  %t387 = mul i64 %c.5, 64
  %t388 = mul i64 0, 512
  %t389 = add i64 %t387, %t388
  %t390 = mul i64 %oh.12, 8
  %t391 = add i64 %t389, %t390
  %t392 = add i64 %t391, %ow.19
  %p393 = getelementptr inbounds float, ptr %param.0, i64 %t392
  %v394 = load float, ptr %p393, align 4
  %t395 = mul i64 %oh.12, 2
  %t396 = add i64 2, %t395
  %t397 = sub i64 %t396, 1
  %t398 = icmp sge i64 %t397, 0
  %t399 = mul i64 %oh.12, 2
  %t400 = add i64 2, %t399
  %t401 = sub i64 %t400, 1
  %t402 = icmp slt i64 %t401, 15
  %t403 = and i1 %t398, %t402
  %t404 = mul i64 %ow.19, 2
  %t405 = add i64 1, %t404
  %t406 = sub i64 %t405, 1
  %t407 = icmp sge i64 %t406, 0
  %t408 = mul i64 %ow.19, 2
  %t409 = add i64 1, %t408
  %t410 = sub i64 %t409, 1
  %t411 = icmp slt i64 %t410, 15
  %t412 = and i1 %t407, %t411
  %t413 = and i1 %t403, %t412
  %t414 = mul i64 %c.5, 225
  %t415 = mul i64 0, 1800
  %t416 = add i64 %t414, %t415
  %t417 = mul i64 %oh.12, 2
  %t418 = add i64 2, %t417
  %t419 = sub i64 %t418, 1
  %t420 = call i64 @llvm.smin.i64(i64 %t419, i64 14)
  %t421 = mul i64 %t420, 15
  %t422 = add i64 %t416, %t421
  %t423 = mul i64 %ow.19, 2
  %t424 = add i64 1, %t423
  %t425 = sub i64 %t424, 1
  %t426 = add i64 %t422, %t425
  %p427 = getelementptr inbounds float, ptr %param.1, i64 %t426
  %v428 = load float, ptr %p427, align 4
  %s429 = select i1 %t413, float %v428, float 0xFFF0000000000000
  %t430 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v394, float %s429)
  %t431 = mul i64 %c.5, 64
  %t432 = mul i64 0, 512
  %t433 = add i64 %t431, %t432
  %t434 = mul i64 %oh.12, 8
  %t435 = add i64 %t433, %t434
  %t436 = add i64 %t435, %ow.19
  %p437 = getelementptr inbounds float, ptr %param.0, i64 %t436
  store float %t430, ptr %p437, align 4
  %t438 = mul i64 %c.5, 64
  %t439 = mul i64 0, 512
  %t440 = add i64 %t438, %t439
  %t441 = mul i64 %oh.12, 8
  %t442 = add i64 %t440, %t441
  %t443 = add i64 %t442, %ow.19
  %p444 = getelementptr inbounds float, ptr %param.0, i64 %t443
  %v445 = load float, ptr %p444, align 4
  %t446 = mul i64 %oh.12, 2
  %t447 = add i64 2, %t446
  %t448 = sub i64 %t447, 1
  %t449 = icmp sge i64 %t448, 0
  %t450 = mul i64 %oh.12, 2
  %t451 = add i64 2, %t450
  %t452 = sub i64 %t451, 1
  %t453 = icmp slt i64 %t452, 15
  %t454 = and i1 %t449, %t453
  %t455 = mul i64 %ow.19, 2
  %t456 = add i64 2, %t455
  %t457 = sub i64 %t456, 1
  %t458 = icmp sge i64 %t457, 0
  %t459 = mul i64 %ow.19, 2
  %t460 = add i64 2, %t459
  %t461 = sub i64 %t460, 1
  %t462 = icmp slt i64 %t461, 15
  %t463 = and i1 %t458, %t462
  %t464 = and i1 %t454, %t463
  %t465 = mul i64 %c.5, 225
  %t466 = mul i64 0, 1800
  %t467 = add i64 %t465, %t466
  %t468 = mul i64 %oh.12, 2
  %t469 = add i64 2, %t468
  %t470 = sub i64 %t469, 1
  %t471 = call i64 @llvm.smin.i64(i64 %t470, i64 14)
  %t472 = mul i64 %t471, 15
  %t473 = add i64 %t467, %t472
  %t474 = mul i64 %ow.19, 2
  %t475 = add i64 2, %t474
  %t476 = sub i64 %t475, 1
  %t477 = call i64 @llvm.smin.i64(i64 %t476, i64 14)
  %t478 = add i64 %t473, %t477
  %p479 = getelementptr inbounds float, ptr %param.1, i64 %t478
  %v480 = load float, ptr %p479, align 4
  %s481 = select i1 %t464, float %v480, float 0xFFF0000000000000
  %t482 = call reassoc nsz contract arcp afn float @llvm.maximum.f32(float %v445, float %s481)
  %t483 = mul i64 %c.5, 64
  %t484 = mul i64 0, 512
  %t485 = add i64 %t483, %t484
  %t486 = mul i64 %oh.12, 8
  %t487 = add i64 %t485, %t486
  %t488 = add i64 %t487, %ow.19
  %p489 = getelementptr inbounds float, ptr %param.0, i64 %t488
  store float %t482, ptr %p489, align 4
  br label %ow.latch17
ow.latch17:
  %n20 = add nuw nsw i64 %ow.19, 1
  br label %ow.head15, !llvm.loop !0
ow.exit18:
  br label %oh.latch10
oh.latch10:
  %n13 = add nuw nsw i64 %oh.12, 1
  br label %oh.head8, !llvm.loop !3
oh.exit11:
  br label %c.latch3
c.latch3:
  %n6 = add nuw nsw i64 %c.5, 1
  br label %c.head1, !llvm.loop !5
c.exit4:
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

!2 = !{!"llvm.loop.vectorize.width", i32 16}

!3 = distinct !{!3, !4}

!4 = !{!"llvm.loop.unroll.disable"}

!5 = distinct !{!5, !6}

!6 = !{!"llvm.loop.unroll.disable"}
