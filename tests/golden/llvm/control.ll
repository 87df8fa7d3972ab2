; ModuleID = "qd_control_HASH"
target triple = "HOST"
target datalayout = "HOST"

define internal i32 @"qd_control_HASH.body"(ptr %".1", ptr %".2")
{
entry:
  %"c" = alloca i32
  %"frame" = alloca {ptr, ptr, i64, i64, i64, i64}
  br label %"body"
body:
  %".4" = load ptr, ptr %".2"
  %".5" = getelementptr i64, ptr %".2", i64 1
  %".6" = load i64, ptr %".5"
  %".7" = getelementptr i64, ptr %".2", i64 2
  %".8" = load i64, ptr %".7"
  store i32 0, ptr %"c"
  %".10" = trunc i64 %".6" to i32
  %".11" = trunc i64 %".8" to i32
  %".12" = trunc i64 %".6" to i32
  %".13" = trunc i64 %".8" to i32
  %".14" = call i32 @"llvm.smax.i32"(i32 %".10", i32 0)
  %".15" = sub i32 %".13", 1
  %".16" = call i32 @"llvm.smax.i32"(i32 %".15", i32 0)
  %".17" = sext i32 %".14" to i64
  %".18" = sext i32 %".16" to i64
  %".19" = mul i64 %".17", %".18"
  %".20" = getelementptr {ptr, ptr, i64, i64, i64, i64}, ptr %"frame", i32 0, i32 0
  store ptr %".1", ptr %".20"
  %".22" = getelementptr {ptr, ptr, i64, i64, i64, i64}, ptr %"frame", i32 0, i32 1
  store ptr %".4", ptr %".22"
  %".24" = getelementptr {ptr, ptr, i64, i64, i64, i64}, ptr %"frame", i32 0, i32 2
  store i64 %".6", ptr %".24"
  %".26" = getelementptr {ptr, ptr, i64, i64, i64, i64}, ptr %"frame", i32 0, i32 3
  store i64 %".8", ptr %".26"
  %".28" = getelementptr {ptr, ptr, i64, i64, i64, i64}, ptr %"frame", i32 0, i32 4
  store i64 %".17", ptr %".28"
  %".30" = getelementptr {ptr, ptr, i64, i64, i64, i64}, ptr %"frame", i32 0, i32 5
  store i64 %".18", ptr %".30"
  %".32" = getelementptr {i32, i32, i64, i64, i64, i64, ptr, ptr, ptr}, ptr %".1", i32 0, i32 0
  %".33" = load i32, ptr %".32"
  call void @"qd_rt4_parallel_for"(void (ptr, i64, i64)* @"qd_control_HASH.task1", ptr %"frame", i64 0, i64 %".19", i32 %".33", i64 54, ptr %".1")
  %".35" = load i32, ptr %"c"
  %".36" = add i32 %".35", 0
  store i32 %".36", ptr %"c"
  %".38" = load i32, ptr %"c"
  %".39" = add i32 %".38", 1
  store i32 %".39", ptr %"c"
  %".41" = load i32, ptr %"c"
  %".42" = add i32 %".41", 2
  store i32 %".42", ptr %"c"
  %".44" = load i32, ptr %"c"
  %".45" = getelementptr {i32, i32, i64, i64, i64, i64, ptr, ptr, ptr}, ptr %".1", i32 0, i32 6
  %".46" = load ptr, ptr %".45"
  %".47" = getelementptr i8, ptr %".46", i64 0
  store i32 %".44", ptr %".47"
  ret i32 0
dead:
  ret i32 0
}

define i32 @"qd_control_HASH"(ptr %".1", ptr %".2")
{
entry:
  %"mxcsr.caller" = alloca i32
  %"mxcsr.kernel" = alloca i32
  call void @"llvm.x86.sse.stmxcsr"(ptr %"mxcsr.caller")
  %".5" = load i32, ptr %"mxcsr.caller"
  %".6" = or i32 %".5", 32768
  store i32 %".6", ptr %"mxcsr.kernel"
  call void @"llvm.x86.sse.ldmxcsr"(ptr %"mxcsr.kernel")
  %".9" = call i32 @"qd_control_HASH.body"(ptr %".1", ptr %".2")
  call void @"llvm.x86.sse.ldmxcsr"(ptr %"mxcsr.caller")
  ret i32 %".9"
}

declare void @"llvm.x86.sse.stmxcsr"(ptr %".1")

declare void @"llvm.x86.sse.ldmxcsr"(ptr %".1")

declare i32 @"llvm.smax.i32"(i32 %".1", i32 %".2")

define internal void @"qd_control_HASH.task1"(ptr %".1", i64 %".2", i64 %".3")
{
entry:
  %"k" = alloca i32
  %".54" = alloca i8
  %"v" = alloca i32
  br label %"body"
body:
  %".5" = getelementptr {ptr, ptr, i64, i64, i64, i64}, ptr %".1", i32 0, i32 0
  %".6" = load ptr, ptr %".5"
  %".7" = getelementptr {ptr, ptr, i64, i64, i64, i64}, ptr %".1", i32 0, i32 1
  %".8" = load ptr, ptr %".7"
  %".9" = getelementptr {ptr, ptr, i64, i64, i64, i64}, ptr %".1", i32 0, i32 2
  %".10" = load i64, ptr %".9"
  %".11" = getelementptr {ptr, ptr, i64, i64, i64, i64}, ptr %".1", i32 0, i32 3
  %".12" = load i64, ptr %".11"
  %".13" = getelementptr {ptr, ptr, i64, i64, i64, i64}, ptr %".1", i32 0, i32 4
  %".14" = load i64, ptr %".13"
  %".15" = getelementptr {ptr, ptr, i64, i64, i64, i64}, ptr %".1", i32 0, i32 5
  %".16" = load i64, ptr %".15"
  br label %"rows"
rows:
  %".18" = phi  i64 [%".2", %"body"], [%".106", %"rows.rowend"]
  %".19" = icmp slt i64 %".18", %".3"
  br i1 %".19", label %"rows.row", label %"rows.end"
rows.row:
  %".21" = sdiv i64 %".18", %".16"
  %".22" = mul i64 %".21", %".16"
  %".23" = sub i64 %".18", %".22"
  %".24" = sub i64 %".3", %".18"
  %".25" = add i64 %".23", %".24"
  %".26" = icmp slt i64 %".25", %".16"
  %".27" = select  i1 %".26", i64 %".25", i64 %".16"
  %".28" = mul i64 %".21", %".16"
  br label %"for"
rows.rowend:
  %".105" = sub i64 %".27", %".23"
  %".106" = add i64 %".18", %".105"
  br label %"rows"
rows.end:
  ret void
for:
  %".30" = phi  i64 [%".23", %"rows.row"], [%".103", %"for.next"]
  %".31" = icmp slt i64 %".30", %".27"
  br i1 %".31", label %"for.body", label %"rows.rowend"
for.body:
  %".33" = add i64 %".28", %".30"
  %".34" = trunc i64 %".21" to i32
  %".35" = trunc i64 %".30" to i32
  %".36" = add i32 %".35", 1
  store i32 0, ptr %"k"
  br label %"while"
for.next:
  %".103" = add nsw i64 %".30", 1
  br label %"for"
while:
  %".39" = load i32, ptr %"k"
  %".40" = icmp slt i32 %".39", 3
  %".41" = icmp eq i1 %".40", 0
  br i1 %".41", label %"if.then", label %"if.else"
while.end:
  br label %"for.next"
if.then:
  br label %"while.end"
if.else:
  br label %"if.end"
if.end:
  %".46" = sext i32 %".34" to i64
  %".47" = sext i32 %".36" to i64
  %".48" = mul i64 %".46", %".12"
  %".49" = add i64 %".48", %".47"
  %".50" = getelementptr inbounds i32, ptr %".8", i64 %".49"
  %".51" = load i32, ptr %".50"
  %".52" = load i32, ptr %"k"
  %".53" = icmp sgt i32 %".51", %".52"
  %".55" = zext i1 %".53" to i8
  store i8 %".55", ptr %".54"
  br i1 %".53", label %"if.then.1", label %"if.else.1"
dead:
  br label %"if.end"
if.then.1:
  %".58" = load i32, ptr %"k"
  %".59" = icmp eq i32 2, 0
  %".60" = select  i1 %".59", i32 1, i32 2
  %".61" = icmp eq i32 %".60", -1
  %".62" = select  i1 %".61", i32 1, i32 %".60"
  %".63" = sdiv i32 %".58", %".62"
  %".64" = sub i32 0, %".63"
  %".65" = select  i1 %".61", i32 %".64", i32 %".63"
  %".66" = srem i32 %".58", %".62"
  %".67" = select  i1 %".61", i32 0, i32 %".66"
  %".68" = icmp ne i32 %".67", 0
  %".69" = xor i32 %".67", %".62"
  %".70" = icmp slt i32 %".69", 0
  %".71" = and i1 %".68", %".70"
  %".72" = sub i32 %".65", 1
  %".73" = select  i1 %".71", i32 %".72", i32 %".65"
  %".74" = add i32 %".67", %".62"
  %".75" = select  i1 %".71", i32 %".74", i32 %".67"
  %".76" = select  i1 %".59", i32 0, i32 %".75"
  %".77" = icmp eq i32 %".76", 0
  %".78" = zext i1 %".77" to i8
  store i8 %".78", ptr %".54"
  br label %"if.end.1"
if.else.1:
  br label %"if.end.1"
if.end.1:
  %".82" = load i8, ptr %".54"
  %".83" = icmp ne i8 %".82", 0
  br i1 %".83", label %"if.then.2", label %"if.else.2"
if.then.2:
  %".85" = load i32, ptr %"k"
  store i32 %".85", ptr %"v"
  %".87" = load i32, ptr %"v"
  %".88" = load i32, ptr %"v"
  %".89" = mul i32 %".87", %".88"
  %".90" = sext i32 %".34" to i64
  %".91" = sext i32 %".36" to i64
  %".92" = mul i64 %".90", %".12"
  %".93" = add i64 %".92", %".91"
  %".94" = getelementptr inbounds i32, ptr %".8", i64 %".93"
  store i32 %".89", ptr %".94"
  br label %"if.end.2"
if.else.2:
  br label %"if.end.2"
if.end.2:
  %".98" = load i32, ptr %"k"
  %".99" = add i32 %".98", 1
  store i32 %".99", ptr %"k"
  br label %"while"
}

declare void @"qd_rt4_parallel_for"(ptr %".1", ptr %".2", i64 %".3", i64 %".4", i32 %".5", i64 %".6", ptr %".7")
