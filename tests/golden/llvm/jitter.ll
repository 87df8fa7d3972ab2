; ModuleID = "qd_jitter_HASH"
target triple = "HOST"
target datalayout = "HOST"

define internal i32 @"qd_jitter_HASH.body"(ptr %".1", ptr %".2", i64 %".3", i64 %".4")
{
entry:
  %"frame" = alloca {ptr, i64, ptr, i64}
  %"rand.counter" = alloca i32
  br label %"body"
body:
  %".6" = and i64 30, 63
  %".7" = lshr i64 %".3", %".6"
  %".8" = xor i64 %".3", %".7"
  %".9" = mul i64 %".8", 13787848793156543929
  %".10" = and i64 27, 63
  %".11" = lshr i64 %".9", %".10"
  %".12" = xor i64 %".9", %".11"
  %".13" = mul i64 %".12", 10723151780598845931
  %".14" = and i64 31, 63
  %".15" = lshr i64 %".13", %".14"
  %".16" = xor i64 %".13", %".15"
  %".17" = mul i64 %".4", 11400714819323198485
  %".18" = add i64 %".16", %".17"
  %".19" = and i64 30, 63
  %".20" = lshr i64 %".18", %".19"
  %".21" = xor i64 %".18", %".20"
  %".22" = mul i64 %".21", 13787848793156543929
  %".23" = and i64 27, 63
  %".24" = lshr i64 %".22", %".23"
  %".25" = xor i64 %".22", %".24"
  %".26" = mul i64 %".25", 10723151780598845931
  %".27" = and i64 31, 63
  %".28" = lshr i64 %".26", %".27"
  %".29" = xor i64 %".26", %".28"
  %".30" = load ptr, ptr %".2"
  %".31" = getelementptr i64, ptr %".2", i64 1
  %".32" = load i64, ptr %".31"
  %".33" = trunc i64 %".32" to i32
  %".34" = getelementptr {ptr, i64, ptr, i64}, ptr %"frame", i32 0, i32 0
  store ptr %".1", ptr %".34"
  %".36" = getelementptr {ptr, i64, ptr, i64}, ptr %"frame", i32 0, i32 1
  store i64 %".29", ptr %".36"
  %".38" = getelementptr {ptr, i64, ptr, i64}, ptr %"frame", i32 0, i32 2
  store ptr %".30", ptr %".38"
  %".40" = getelementptr {ptr, i64, ptr, i64}, ptr %"frame", i32 0, i32 3
  store i64 %".32", ptr %".40"
  %".42" = getelementptr {i32, i32, i64, i64, i64, i64, ptr, ptr, ptr}, ptr %".1", i32 0, i32 0
  %".43" = load i32, ptr %".42"
  %".44" = sext i32 %".33" to i64
  call void @"qd_rt4_parallel_for"(void (ptr, i64, i64)* @"qd_jitter_HASH.task1", ptr %"frame", i64 0, i64 %".44", i32 %".43", i64 277, ptr %".1")
  store i32 0, ptr %"rand.counter"
  %".47" = load i32, ptr %"rand.counter"
  %".48" = call {i32, i32} @"qd.philox4x32_10"(i64 %".29", i32 %".47", i32 0, i64 0)
  %".49" = extractvalue {i32, i32} %".48", 0
  %".50" = extractvalue {i32, i32} %".48", 1
  %".51" = zext i32 %".49" to i64
  %".52" = shl i64 %".51", 32
  %".53" = zext i32 %".50" to i64
  %".54" = or i64 %".52", %".53"
  %".55" = lshr i64 %".54", 11
  %".56" = sitofp i64 %".55" to double
  %".57" = fmul double %".56", 0x3ca0000000000000
  %".58" = add i32 %".47", 1
  store i32 %".58", ptr %"rand.counter"
  %".60" = getelementptr {i32, i32, i64, i64, i64, i64, ptr, ptr, ptr}, ptr %".1", i32 0, i32 6
  %".61" = load ptr, ptr %".60"
  %".62" = getelementptr i8, ptr %".61", i64 0
  store double %".57", ptr %".62"
  ret i32 0
dead:
  ret i32 0
}

define i32 @"qd_jitter_HASH"(ptr %".1", ptr %".2", i64 %".3", i64 %".4")
{
entry:
  %"mxcsr.caller" = alloca i32
  %"mxcsr.kernel" = alloca i32
  call void @"llvm.x86.sse.stmxcsr"(ptr %"mxcsr.caller")
  %".7" = load i32, ptr %"mxcsr.caller"
  %".8" = or i32 %".7", 32768
  store i32 %".8", ptr %"mxcsr.kernel"
  call void @"llvm.x86.sse.ldmxcsr"(ptr %"mxcsr.kernel")
  %".11" = call i32 @"qd_jitter_HASH.body"(ptr %".1", ptr %".2", i64 %".3", i64 %".4")
  call void @"llvm.x86.sse.ldmxcsr"(ptr %"mxcsr.caller")
  ret i32 %".11"
}

declare void @"llvm.x86.sse.stmxcsr"(ptr %".1")

declare void @"llvm.x86.sse.ldmxcsr"(ptr %".1")

define internal void @"qd_jitter_HASH.task1"(ptr %".1", i64 %".2", i64 %".3")
{
entry:
  %"rand.counter" = alloca i32
  br label %"body"
body:
  %".5" = getelementptr {ptr, i64, ptr, i64}, ptr %".1", i32 0, i32 0
  %".6" = load ptr, ptr %".5"
  %".7" = getelementptr {ptr, i64, ptr, i64}, ptr %".1", i32 0, i32 1
  %".8" = load i64, ptr %".7"
  %".9" = getelementptr {ptr, i64, ptr, i64}, ptr %".1", i32 0, i32 2
  %".10" = load ptr, ptr %".9"
  %".11" = getelementptr {ptr, i64, ptr, i64}, ptr %".1", i32 0, i32 3
  %".12" = load i64, ptr %".11"
  %".13" = trunc i64 %".2" to i32
  %".14" = trunc i64 %".3" to i32
  br label %"for"
for.end:
  ret void
for:
  %".16" = phi  i32 [%".13", %"body"], [%".40", %"for.next"]
  %".17" = icmp slt i32 %".16", %".14"
  br i1 %".17", label %"for.body", label %"for.end"
for.body:
  store i32 0, ptr %"rand.counter"
  br label %"for.1"
for.next:
  %".40" = add nsw i32 %".16", 1
  br label %"for"
for.end.1:
  br label %"for.next"
for.1:
  %".21" = phi  i32 [0, %"for.body"], [%".37", %"for.next.1"]
  %".22" = icmp slt i32 %".21", 2
  br i1 %".22", label %"for.body.1", label %"for.end.1"
for.body.1:
  %".24" = load i32, ptr %"rand.counter"
  %".25" = sext i32 %".16" to i64
  %".26" = call {i32, i32} @"qd.philox4x32_10"(i64 %".8", i32 %".24", i32 1, i64 %".25")
  %".27" = extractvalue {i32, i32} %".26", 0
  %".28" = lshr i32 %".27", 8
  %".29" = sitofp i32 %".28" to float
  %".30" = fmul float %".29", 0x3e70000000000000
  %".31" = add i32 %".24", 1
  store i32 %".31", ptr %"rand.counter"
  %".33" = sext i32 %".16" to i64
  %".34" = getelementptr inbounds float, ptr %".10", i64 %".33"
  %".35" = atomicrmw fadd ptr %".34", float %".30" seq_cst
  br label %"for.next.1"
for.next.1:
  %".37" = add nsw i32 %".21", 1
  br label %"for.1"
}

define internal {i32, i32} @"qd.philox4x32_10"(i64 %".1", i32 %".2", i32 %".3", i64 %".4") alwaysinline nounwind
{
entry:
  %".6" = trunc i64 %".1" to i32
  %".7" = lshr i64 %".1", 32
  %".8" = trunc i64 %".7" to i32
  %".9" = trunc i64 %".4" to i32
  %".10" = lshr i64 %".4", 32
  %".11" = trunc i64 %".10" to i32
  %".12" = zext i32 %".2" to i64
  %".13" = mul nuw i64 %".12", 3528531795
  %".14" = trunc i64 %".13" to i32
  %".15" = lshr i64 %".13", 32
  %".16" = trunc i64 %".15" to i32
  %".17" = zext i32 %".9" to i64
  %".18" = mul nuw i64 %".17", 3449720151
  %".19" = trunc i64 %".18" to i32
  %".20" = lshr i64 %".18", 32
  %".21" = trunc i64 %".20" to i32
  %".22" = xor i32 %".21", %".3"
  %".23" = xor i32 %".22", %".6"
  %".24" = xor i32 %".16", %".11"
  %".25" = xor i32 %".24", %".8"
  %".26" = add i32 %".6", 2654435769
  %".27" = add i32 %".8", 3144134277
  %".28" = zext i32 %".23" to i64
  %".29" = mul nuw i64 %".28", 3528531795
  %".30" = trunc i64 %".29" to i32
  %".31" = lshr i64 %".29", 32
  %".32" = trunc i64 %".31" to i32
  %".33" = zext i32 %".25" to i64
  %".34" = mul nuw i64 %".33", 3449720151
  %".35" = trunc i64 %".34" to i32
  %".36" = lshr i64 %".34", 32
  %".37" = trunc i64 %".36" to i32
  %".38" = xor i32 %".37", %".19"
  %".39" = xor i32 %".38", %".26"
  %".40" = xor i32 %".32", %".14"
  %".41" = xor i32 %".40", %".27"
  %".42" = add i32 %".26", 2654435769
  %".43" = add i32 %".27", 3144134277
  %".44" = zext i32 %".39" to i64
  %".45" = mul nuw i64 %".44", 3528531795
  %".46" = trunc i64 %".45" to i32
  %".47" = lshr i64 %".45", 32
  %".48" = trunc i64 %".47" to i32
  %".49" = zext i32 %".41" to i64
  %".50" = mul nuw i64 %".49", 3449720151
  %".51" = trunc i64 %".50" to i32
  %".52" = lshr i64 %".50", 32
  %".53" = trunc i64 %".52" to i32
  %".54" = xor i32 %".53", %".35"
  %".55" = xor i32 %".54", %".42"
  %".56" = xor i32 %".48", %".30"
  %".57" = xor i32 %".56", %".43"
  %".58" = add i32 %".42", 2654435769
  %".59" = add i32 %".43", 3144134277
  %".60" = zext i32 %".55" to i64
  %".61" = mul nuw i64 %".60", 3528531795
  %".62" = trunc i64 %".61" to i32
  %".63" = lshr i64 %".61", 32
  %".64" = trunc i64 %".63" to i32
  %".65" = zext i32 %".57" to i64
  %".66" = mul nuw i64 %".65", 3449720151
  %".67" = trunc i64 %".66" to i32
  %".68" = lshr i64 %".66", 32
  %".69" = trunc i64 %".68" to i32
  %".70" = xor i32 %".69", %".51"
  %".71" = xor i32 %".70", %".58"
  %".72" = xor i32 %".64", %".46"
  %".73" = xor i32 %".72", %".59"
  %".74" = add i32 %".58", 2654435769
  %".75" = add i32 %".59", 3144134277
  %".76" = zext i32 %".71" to i64
  %".77" = mul nuw i64 %".76", 3528531795
  %".78" = trunc i64 %".77" to i32
  %".79" = lshr i64 %".77", 32
  %".80" = trunc i64 %".79" to i32
  %".81" = zext i32 %".73" to i64
  %".82" = mul nuw i64 %".81", 3449720151
  %".83" = trunc i64 %".82" to i32
  %".84" = lshr i64 %".82", 32
  %".85" = trunc i64 %".84" to i32
  %".86" = xor i32 %".85", %".67"
  %".87" = xor i32 %".86", %".74"
  %".88" = xor i32 %".80", %".62"
  %".89" = xor i32 %".88", %".75"
  %".90" = add i32 %".74", 2654435769
  %".91" = add i32 %".75", 3144134277
  %".92" = zext i32 %".87" to i64
  %".93" = mul nuw i64 %".92", 3528531795
  %".94" = trunc i64 %".93" to i32
  %".95" = lshr i64 %".93", 32
  %".96" = trunc i64 %".95" to i32
  %".97" = zext i32 %".89" to i64
  %".98" = mul nuw i64 %".97", 3449720151
  %".99" = trunc i64 %".98" to i32
  %".100" = lshr i64 %".98", 32
  %".101" = trunc i64 %".100" to i32
  %".102" = xor i32 %".101", %".83"
  %".103" = xor i32 %".102", %".90"
  %".104" = xor i32 %".96", %".78"
  %".105" = xor i32 %".104", %".91"
  %".106" = add i32 %".90", 2654435769
  %".107" = add i32 %".91", 3144134277
  %".108" = zext i32 %".103" to i64
  %".109" = mul nuw i64 %".108", 3528531795
  %".110" = trunc i64 %".109" to i32
  %".111" = lshr i64 %".109", 32
  %".112" = trunc i64 %".111" to i32
  %".113" = zext i32 %".105" to i64
  %".114" = mul nuw i64 %".113", 3449720151
  %".115" = trunc i64 %".114" to i32
  %".116" = lshr i64 %".114", 32
  %".117" = trunc i64 %".116" to i32
  %".118" = xor i32 %".117", %".99"
  %".119" = xor i32 %".118", %".106"
  %".120" = xor i32 %".112", %".94"
  %".121" = xor i32 %".120", %".107"
  %".122" = add i32 %".106", 2654435769
  %".123" = add i32 %".107", 3144134277
  %".124" = zext i32 %".119" to i64
  %".125" = mul nuw i64 %".124", 3528531795
  %".126" = trunc i64 %".125" to i32
  %".127" = lshr i64 %".125", 32
  %".128" = trunc i64 %".127" to i32
  %".129" = zext i32 %".121" to i64
  %".130" = mul nuw i64 %".129", 3449720151
  %".131" = trunc i64 %".130" to i32
  %".132" = lshr i64 %".130", 32
  %".133" = trunc i64 %".132" to i32
  %".134" = xor i32 %".133", %".115"
  %".135" = xor i32 %".134", %".122"
  %".136" = xor i32 %".128", %".110"
  %".137" = xor i32 %".136", %".123"
  %".138" = add i32 %".122", 2654435769
  %".139" = add i32 %".123", 3144134277
  %".140" = zext i32 %".135" to i64
  %".141" = mul nuw i64 %".140", 3528531795
  %".142" = trunc i64 %".141" to i32
  %".143" = lshr i64 %".141", 32
  %".144" = trunc i64 %".143" to i32
  %".145" = zext i32 %".137" to i64
  %".146" = mul nuw i64 %".145", 3449720151
  %".147" = trunc i64 %".146" to i32
  %".148" = lshr i64 %".146", 32
  %".149" = trunc i64 %".148" to i32
  %".150" = xor i32 %".149", %".131"
  %".151" = xor i32 %".150", %".138"
  %".152" = xor i32 %".144", %".126"
  %".153" = xor i32 %".152", %".139"
  %".154" = add i32 %".138", 2654435769
  %".155" = add i32 %".139", 3144134277
  %".156" = zext i32 %".151" to i64
  %".157" = mul nuw i64 %".156", 3528531795
  %".158" = trunc i64 %".157" to i32
  %".159" = lshr i64 %".157", 32
  %".160" = trunc i64 %".159" to i32
  %".161" = zext i32 %".153" to i64
  %".162" = mul nuw i64 %".161", 3449720151
  %".163" = trunc i64 %".162" to i32
  %".164" = lshr i64 %".162", 32
  %".165" = trunc i64 %".164" to i32
  %".166" = xor i32 %".165", %".147"
  %".167" = xor i32 %".166", %".154"
  %".168" = xor i32 %".160", %".142"
  %".169" = xor i32 %".168", %".155"
  %".170" = insertvalue {i32, i32} undef, i32 %".167", 0
  %".171" = insertvalue {i32, i32} %".170", i32 %".163", 1
  ret {i32, i32} %".171"
}

declare void @"qd_rt4_parallel_for"(ptr %".1", ptr %".2", i64 %".3", i64 %".4", i32 %".5", i64 %".6", ptr %".7")
