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
  call void @"qd_rt3_parallel_for"(void (ptr, i64, i64)* @"qd_control_HASH.task1", ptr %"frame", i64 0, i64 %".19", i32 %".33", i64 54, ptr %".1")
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
  %".57" = alloca i8
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
  %".18" = phi  i64 [%".2", %"body"], [%".109", %"rows.rowend"]
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
  %".28" = sdiv i64 %".21", %".14"
  %".29" = mul i64 %".28", %".14"
  %".30" = sub i64 %".21", %".29"
  %".31" = mul i64 %".21", %".16"
  br label %"for"
rows.rowend:
  %".108" = sub i64 %".27", %".23"
  %".109" = add i64 %".18", %".108"
  br label %"rows"
rows.end:
  ret void
for:
  %".33" = phi  i64 [%".23", %"rows.row"], [%".106", %"for.next"]
  %".34" = icmp slt i64 %".33", %".27"
  br i1 %".34", label %"for.body", label %"rows.rowend"
for.body:
  %".36" = add i64 %".31", %".33"
  %".37" = trunc i64 %".30" to i32
  %".38" = trunc i64 %".33" to i32
  %".39" = add i32 %".38", 1
  store i32 0, ptr %"k"
  br label %"while"
for.next:
  %".106" = add nsw i64 %".33", 1
  br label %"for"
while:
  %".42" = load i32, ptr %"k"
  %".43" = icmp slt i32 %".42", 3
  %".44" = icmp eq i1 %".43", 0
  br i1 %".44", label %"if.then", label %"if.else"
while.end:
  br label %"for.next"
if.then:
  br label %"while.end"
if.else:
  br label %"if.end"
if.end:
  %".49" = sext i32 %".37" to i64
  %".50" = sext i32 %".39" to i64
  %".51" = mul i64 %".49", %".12"
  %".52" = add i64 %".51", %".50"
  %".53" = getelementptr inbounds i32, ptr %".8", i64 %".52"
  %".54" = load i32, ptr %".53"
  %".55" = load i32, ptr %"k"
  %".56" = icmp sgt i32 %".54", %".55"
  %".58" = zext i1 %".56" to i8
  store i8 %".58", ptr %".57"
  br i1 %".56", label %"if.then.1", label %"if.else.1"
dead:
  br label %"if.end"
if.then.1:
  %".61" = load i32, ptr %"k"
  %".62" = icmp eq i32 2, 0
  %".63" = select  i1 %".62", i32 1, i32 2
  %".64" = icmp eq i32 %".63", -1
  %".65" = select  i1 %".64", i32 1, i32 %".63"
  %".66" = sdiv i32 %".61", %".65"
  %".67" = sub i32 0, %".66"
  %".68" = select  i1 %".64", i32 %".67", i32 %".66"
  %".69" = srem i32 %".61", %".65"
  %".70" = select  i1 %".64", i32 0, i32 %".69"
  %".71" = icmp ne i32 %".70", 0
  %".72" = xor i32 %".70", %".65"
  %".73" = icmp slt i32 %".72", 0
  %".74" = and i1 %".71", %".73"
  %".75" = sub i32 %".68", 1
  %".76" = select  i1 %".74", i32 %".75", i32 %".68"
  %".77" = add i32 %".70", %".65"
  %".78" = select  i1 %".74", i32 %".77", i32 %".70"
  %".79" = select  i1 %".62", i32 0, i32 %".78"
  %".80" = icmp eq i32 %".79", 0
  %".81" = zext i1 %".80" to i8
  store i8 %".81", ptr %".57"
  br label %"if.end.1"
if.else.1:
  br label %"if.end.1"
if.end.1:
  %".85" = load i8, ptr %".57"
  %".86" = icmp ne i8 %".85", 0
  br i1 %".86", label %"if.then.2", label %"if.else.2"
if.then.2:
  %".88" = load i32, ptr %"k"
  store i32 %".88", ptr %"v"
  %".90" = load i32, ptr %"v"
  %".91" = load i32, ptr %"v"
  %".92" = mul i32 %".90", %".91"
  %".93" = sext i32 %".37" to i64
  %".94" = sext i32 %".39" to i64
  %".95" = mul i64 %".93", %".12"
  %".96" = add i64 %".95", %".94"
  %".97" = getelementptr inbounds i32, ptr %".8", i64 %".96"
  store i32 %".92", ptr %".97"
  br label %"if.end.2"
if.else.2:
  br label %"if.end.2"
if.end.2:
  %".101" = load i32, ptr %"k"
  %".102" = add i32 %".101", 1
  store i32 %".102", ptr %"k"
  br label %"while"
}

declare void @"qd_rt3_parallel_for"(ptr %".1", ptr %".2", i64 %".3", i64 %".4", i32 %".5", i64 %".6", ptr %".7")
