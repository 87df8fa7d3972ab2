; ModuleID = "qd_phases_HASH"
target triple = "HOST"
target datalayout = "HOST"

define internal i32 @"qd_phases_HASH.body"(ptr %".1", ptr %".2")
{
entry:
  %"c" = alloca i32
  %"frame" = alloca {ptr, ptr, i64, ptr}
  %"m" = alloca i32
  %"frame.1" = alloca {ptr, ptr, ptr, i64}
  br label %"body"
body:
  %".4" = load ptr, ptr %".2"
  %".5" = getelementptr i64, ptr %".2", i64 1
  %".6" = load i64, ptr %".5"
  store i32 0, ptr %"c"
  %".8" = trunc i64 %".6" to i32
  %".9" = getelementptr {ptr, ptr, i64, ptr}, ptr %"frame", i32 0, i32 0
  store ptr %".1", ptr %".9"
  %".11" = getelementptr {ptr, ptr, i64, ptr}, ptr %"frame", i32 0, i32 1
  store ptr %".4", ptr %".11"
  %".13" = getelementptr {ptr, ptr, i64, ptr}, ptr %"frame", i32 0, i32 2
  store i64 %".6", ptr %".13"
  %".15" = getelementptr {ptr, ptr, i64, ptr}, ptr %"frame", i32 0, i32 3
  store ptr %"c", ptr %".15"
  %".17" = getelementptr {i32, i32, i64, i64, i64, i64, ptr, ptr, ptr}, ptr %".1", i32 0, i32 0
  %".18" = load i32, ptr %".17"
  %".19" = sext i32 %".8" to i64
  call void @"qd_rt4_parallel_for"(void (ptr, i64, i64)* @"qd_phases_HASH.task1", ptr %"frame", i64 0, i64 %".19", i32 %".18", i64 10922, ptr %".1")
  %".21" = load i32, ptr %"c"
  %".22" = mul i32 %".21", 2
  store i32 %".22", ptr %"m"
  %".24" = trunc i64 %".6" to i32
  %".25" = getelementptr {ptr, ptr, ptr, i64}, ptr %"frame.1", i32 0, i32 0
  store ptr %".1", ptr %".25"
  %".27" = getelementptr {ptr, ptr, ptr, i64}, ptr %"frame.1", i32 0, i32 1
  store ptr %"m", ptr %".27"
  %".29" = getelementptr {ptr, ptr, ptr, i64}, ptr %"frame.1", i32 0, i32 2
  store ptr %".4", ptr %".29"
  %".31" = getelementptr {ptr, ptr, ptr, i64}, ptr %"frame.1", i32 0, i32 3
  store i64 %".6", ptr %".31"
  %".33" = getelementptr {i32, i32, i64, i64, i64, i64, ptr, ptr, ptr}, ptr %".1", i32 0, i32 0
  %".34" = load i32, ptr %".33"
  %".35" = sext i32 %".24" to i64
  call void @"qd_rt4_parallel_for"(void (ptr, i64, i64)* @"qd_phases_HASH.task2", ptr %"frame.1", i64 0, i64 %".35", i32 %".34", i64 10922, ptr %".1")
  %".37" = load i32, ptr %"m"
  %".38" = getelementptr {i32, i32, i64, i64, i64, i64, ptr, ptr, ptr}, ptr %".1", i32 0, i32 6
  %".39" = load ptr, ptr %".38"
  %".40" = getelementptr i8, ptr %".39", i64 0
  store i32 %".37", ptr %".40"
  ret i32 0
dead:
  ret i32 0
}

define i32 @"qd_phases_HASH"(ptr %".1", ptr %".2")
{
entry:
  %"mxcsr.caller" = alloca i32
  %"mxcsr.kernel" = alloca i32
  call void @"llvm.x86.sse.stmxcsr"(ptr %"mxcsr.caller")
  %".5" = load i32, ptr %"mxcsr.caller"
  %".6" = or i32 %".5", 32768
  store i32 %".6", ptr %"mxcsr.kernel"
  call void @"llvm.x86.sse.ldmxcsr"(ptr %"mxcsr.kernel")
  %".9" = call i32 @"qd_phases_HASH.body"(ptr %".1", ptr %".2")
  call void @"llvm.x86.sse.ldmxcsr"(ptr %"mxcsr.caller")
  ret i32 %".9"
}

declare void @"llvm.x86.sse.stmxcsr"(ptr %".1")

declare void @"llvm.x86.sse.ldmxcsr"(ptr %".1")

define internal void @"qd_phases_HASH.task1"(ptr %".1", i64 %".2", i64 %".3")
{
entry:
  %"acc" = alloca i32
  br label %"body"
body:
  %".5" = getelementptr {ptr, ptr, i64, ptr}, ptr %".1", i32 0, i32 0
  %".6" = load ptr, ptr %".5"
  %".7" = getelementptr {ptr, ptr, i64, ptr}, ptr %".1", i32 0, i32 1
  %".8" = load ptr, ptr %".7"
  %".9" = getelementptr {ptr, ptr, i64, ptr}, ptr %".1", i32 0, i32 2
  %".10" = load i64, ptr %".9"
  %".11" = getelementptr {ptr, ptr, i64, ptr}, ptr %".1", i32 0, i32 3
  %".12" = load ptr, ptr %".11"
  store i32 2147483648, ptr %"acc"
  %".14" = trunc i64 %".2" to i32
  %".15" = trunc i64 %".3" to i32
  br label %"for"
for.end:
  %".29" = load i32, ptr %"acc"
  %".30" = atomicrmw max ptr %".12", i32 %".29" seq_cst
  ret void
for:
  %".17" = phi  i32 [%".14", %"body"], [%".27", %"for.next"]
  %".18" = icmp slt i32 %".17", %".15"
  br i1 %".18", label %"for.body", label %"for.end"
for.body:
  %".20" = sext i32 %".17" to i64
  %".21" = getelementptr inbounds i32, ptr %".8", i64 %".20"
  %".22" = load i32, ptr %".21"
  %".23" = load i32, ptr %"acc"
  %".24" = call i32 @"llvm.smax.i32"(i32 %".23", i32 %".22")
  store i32 %".24", ptr %"acc"
  br label %"for.next"
for.next:
  %".27" = add nsw i32 %".17", 1
  br label %"for"
}

declare i32 @"llvm.smax.i32"(i32 %".1", i32 %".2")

declare void @"qd_rt4_parallel_for"(ptr %".1", ptr %".2", i64 %".3", i64 %".4", i32 %".5", i64 %".6", ptr %".7")

define internal void @"qd_phases_HASH.task2"(ptr %".1", i64 %".2", i64 %".3")
{
entry:
  br label %"body"
body:
  %".5" = getelementptr {ptr, ptr, ptr, i64}, ptr %".1", i32 0, i32 0
  %".6" = load ptr, ptr %".5"
  %".7" = getelementptr {ptr, ptr, ptr, i64}, ptr %".1", i32 0, i32 1
  %".8" = load ptr, ptr %".7"
  %".9" = getelementptr {ptr, ptr, ptr, i64}, ptr %".1", i32 0, i32 2
  %".10" = load ptr, ptr %".9"
  %".11" = getelementptr {ptr, ptr, ptr, i64}, ptr %".1", i32 0, i32 3
  %".12" = load i64, ptr %".11"
  %".13" = trunc i64 %".2" to i32
  %".14" = trunc i64 %".3" to i32
  br label %"for"
for.end:
  ret void
for:
  %".16" = phi  i32 [%".13", %"body"], [%".24", %"for.next"]
  %".17" = icmp slt i32 %".16", %".14"
  br i1 %".17", label %"for.body", label %"for.end"
for.body:
  %".19" = load i32, ptr %".8"
  %".20" = sext i32 %".16" to i64
  %".21" = getelementptr inbounds i32, ptr %".10", i64 %".20"
  %".22" = atomicrmw add ptr %".21", i32 %".19" seq_cst
  br label %"for.next"
for.next:
  %".24" = add nsw i32 %".16", 1
  br label %"for"
}
