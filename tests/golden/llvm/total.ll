; ModuleID = "qd_total_HASH"
target triple = "HOST"
target datalayout = "HOST"

define internal i32 @"qd_total_HASH.body"(ptr %".1", ptr %".2", ptr %".3")
{
entry:
  %"acc" = alloca float
  %"frame" = alloca {ptr, ptr, i64, ptr, i64, ptr, ptr}
  br label %"body"
body:
  %".5" = load ptr, ptr %".2"
  %".6" = getelementptr i64, ptr %".2", i64 1
  %".7" = load i64, ptr %".6"
  %".8" = load ptr, ptr %".3"
  %".9" = getelementptr i64, ptr %".3", i64 1
  %".10" = load i64, ptr %".9"
  store float              0x0, ptr %"acc"
  %".12" = trunc i64 %".7" to i32
  %".13" = getelementptr inbounds float, ptr %".8", i64 0
  %".14" = getelementptr {ptr, ptr, i64, ptr, i64, ptr, ptr}, ptr %"frame", i32 0, i32 0
  store ptr %".1", ptr %".14"
  %".16" = getelementptr {ptr, ptr, i64, ptr, i64, ptr, ptr}, ptr %"frame", i32 0, i32 1
  store ptr %".5", ptr %".16"
  %".18" = getelementptr {ptr, ptr, i64, ptr, i64, ptr, ptr}, ptr %"frame", i32 0, i32 2
  store i64 %".7", ptr %".18"
  %".20" = getelementptr {ptr, ptr, i64, ptr, i64, ptr, ptr}, ptr %"frame", i32 0, i32 3
  store ptr %".8", ptr %".20"
  %".22" = getelementptr {ptr, ptr, i64, ptr, i64, ptr, ptr}, ptr %"frame", i32 0, i32 4
  store i64 %".10", ptr %".22"
  %".24" = getelementptr {ptr, ptr, i64, ptr, i64, ptr, ptr}, ptr %"frame", i32 0, i32 5
  store ptr %".13", ptr %".24"
  %".26" = getelementptr {ptr, ptr, i64, ptr, i64, ptr, ptr}, ptr %"frame", i32 0, i32 6
  store ptr %"acc", ptr %".26"
  %".28" = getelementptr {i32, i32, i64, i64, i64, i64, ptr, ptr, ptr}, ptr %".1", i32 0, i32 0
  %".29" = load i32, ptr %".28"
  %".30" = sext i32 %".12" to i64
  call void @"qd_rt4_parallel_for"(void (ptr, i64, i64)* @"qd_total_HASH.task1", ptr %"frame", i64 0, i64 %".30", i32 %".29", i64 2978, ptr %".1")
  %".32" = load float, ptr %"acc"
  %".33" = getelementptr {i32, i32, i64, i64, i64, i64, ptr, ptr, ptr}, ptr %".1", i32 0, i32 6
  %".34" = load ptr, ptr %".33"
  %".35" = getelementptr i8, ptr %".34", i64 0
  store float %".32", ptr %".35"
  ret i32 0
dead:
  ret i32 0
}

define i32 @"qd_total_HASH"(ptr %".1", ptr %".2", ptr %".3")
{
entry:
  %"mxcsr.caller" = alloca i32
  %"mxcsr.kernel" = alloca i32
  call void @"llvm.x86.sse.stmxcsr"(ptr %"mxcsr.caller")
  %".6" = load i32, ptr %"mxcsr.caller"
  %".7" = or i32 %".6", 32768
  store i32 %".7", ptr %"mxcsr.kernel"
  call void @"llvm.x86.sse.ldmxcsr"(ptr %"mxcsr.kernel")
  %".10" = call i32 @"qd_total_HASH.body"(ptr %".1", ptr %".2", ptr %".3")
  call void @"llvm.x86.sse.ldmxcsr"(ptr %"mxcsr.caller")
  ret i32 %".10"
}

declare void @"llvm.x86.sse.stmxcsr"(ptr %".1")

declare void @"llvm.x86.sse.ldmxcsr"(ptr %".1")

define internal void @"qd_total_HASH.task1"(ptr %".1", i64 %".2", i64 %".3")
{
entry:
  %"acc" = alloca float
  %"acc.1" = alloca float
  br label %"body"
body:
  %".5" = getelementptr {ptr, ptr, i64, ptr, i64, ptr, ptr}, ptr %".1", i32 0, i32 0
  %".6" = load ptr, ptr %".5"
  %".7" = getelementptr {ptr, ptr, i64, ptr, i64, ptr, ptr}, ptr %".1", i32 0, i32 1
  %".8" = load ptr, ptr %".7"
  %".9" = getelementptr {ptr, ptr, i64, ptr, i64, ptr, ptr}, ptr %".1", i32 0, i32 2
  %".10" = load i64, ptr %".9"
  %".11" = getelementptr {ptr, ptr, i64, ptr, i64, ptr, ptr}, ptr %".1", i32 0, i32 3
  %".12" = load ptr, ptr %".11"
  %".13" = getelementptr {ptr, ptr, i64, ptr, i64, ptr, ptr}, ptr %".1", i32 0, i32 4
  %".14" = load i64, ptr %".13"
  %".15" = getelementptr {ptr, ptr, i64, ptr, i64, ptr, ptr}, ptr %".1", i32 0, i32 5
  %".16" = load ptr, ptr %".15"
  %".17" = getelementptr {ptr, ptr, i64, ptr, i64, ptr, ptr}, ptr %".1", i32 0, i32 6
  %".18" = load ptr, ptr %".17"
  store float              0x0, ptr %"acc"
  store float              0x0, ptr %"acc.1"
  %".21" = trunc i64 %".2" to i32
  %".22" = trunc i64 %".3" to i32
  br label %"for"
for.end:
  %".44" = load float, ptr %"acc"
  %".45" = atomicrmw fadd ptr %".16", float %".44" seq_cst
  %".46" = load float, ptr %"acc.1"
  %".47" = atomicrmw fadd ptr %".18", float %".46" seq_cst
  ret void
for:
  %".24" = phi  i32 [%".21", %"body"], [%".42", %"for.next"]
  %".25" = icmp slt i32 %".24", %".22"
  br i1 %".25", label %"for.body", label %"for.end"
for.body:
  %".27" = sext i32 %".24" to i64
  %".28" = getelementptr inbounds float, ptr %".8", i64 %".27"
  %".29" = load float, ptr %".28"
  %".30" = getelementptr inbounds float, ptr %".12", i64 0
  %".31" = load float, ptr %"acc"
  %".32" = fadd reassoc afn arcp nsz float %".31", %".29"
  store float %".32", ptr %"acc"
  %".34" = sext i32 %".24" to i64
  %".35" = getelementptr inbounds float, ptr %".8", i64 %".34"
  %".36" = load float, ptr %".35"
  %".37" = fmul reassoc afn arcp nsz float %".36", 0x4000000000000000
  %".38" = load float, ptr %"acc.1"
  %".39" = fadd reassoc afn arcp nsz float %".38", %".37"
  store float %".39", ptr %"acc.1"
  br label %"for.next"
for.next:
  %".42" = add nsw i32 %".24", 1
  br label %"for"
}

declare void @"qd_rt4_parallel_for"(ptr %".1", ptr %".2", i64 %".3", i64 %".4", i32 %".5", i64 %".6", ptr %".7")
