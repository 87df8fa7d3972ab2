; ModuleID = "qd_saxpy_HASH"
target triple = "HOST"
target datalayout = "HOST"

define internal i32 @"qd_saxpy_HASH.body"(ptr %".1", float %".2", ptr %".3", ptr %".4")
{
entry:
  %"frame" = alloca {ptr, ptr, i64, float, ptr, i64}
  br label %"body"
body:
  %".6" = load ptr, ptr %".3"
  %".7" = getelementptr i64, ptr %".3", i64 1
  %".8" = load i64, ptr %".7"
  %".9" = load ptr, ptr %".4"
  %".10" = getelementptr i64, ptr %".4", i64 1
  %".11" = load i64, ptr %".10"
  %".12" = trunc i64 %".8" to i32
  %".13" = getelementptr {ptr, ptr, i64, float, ptr, i64}, ptr %"frame", i32 0, i32 0
  store ptr %".1", ptr %".13"
  %".15" = getelementptr {ptr, ptr, i64, float, ptr, i64}, ptr %"frame", i32 0, i32 1
  store ptr %".6", ptr %".15"
  %".17" = getelementptr {ptr, ptr, i64, float, ptr, i64}, ptr %"frame", i32 0, i32 2
  store i64 %".8", ptr %".17"
  %".19" = getelementptr {ptr, ptr, i64, float, ptr, i64}, ptr %"frame", i32 0, i32 3
  store float %".2", ptr %".19"
  %".21" = getelementptr {ptr, ptr, i64, float, ptr, i64}, ptr %"frame", i32 0, i32 4
  store ptr %".9", ptr %".21"
  %".23" = getelementptr {ptr, ptr, i64, float, ptr, i64}, ptr %"frame", i32 0, i32 5
  store i64 %".11", ptr %".23"
  %".25" = getelementptr {i32, i32, i64, i64, i64, i64, ptr, ptr, ptr}, ptr %".1", i32 0, i32 0
  %".26" = load i32, ptr %".25"
  %".27" = sext i32 %".12" to i64
  call void @"qd_rt4_parallel_for"(void (ptr, i64, i64)* @"qd_saxpy_HASH.task1", ptr %"frame", i64 0, i64 %".27", i32 %".26", i64 4096, ptr %".1")
  ret i32 0
}

define i32 @"qd_saxpy_HASH"(ptr %".1", float %".2", ptr %".3", ptr %".4")
{
entry:
  %"mxcsr.caller" = alloca i32
  %"mxcsr.kernel" = alloca i32
  call void @"llvm.x86.sse.stmxcsr"(ptr %"mxcsr.caller")
  %".7" = load i32, ptr %"mxcsr.caller"
  %".8" = or i32 %".7", 32768
  store i32 %".8", ptr %"mxcsr.kernel"
  call void @"llvm.x86.sse.ldmxcsr"(ptr %"mxcsr.kernel")
  %".11" = call i32 @"qd_saxpy_HASH.body"(ptr %".1", float %".2", ptr %".3", ptr %".4")
  call void @"llvm.x86.sse.ldmxcsr"(ptr %"mxcsr.caller")
  ret i32 %".11"
}

declare void @"llvm.x86.sse.stmxcsr"(ptr %".1")

declare void @"llvm.x86.sse.ldmxcsr"(ptr %".1")

define internal void @"qd_saxpy_HASH.task1"(ptr %".1", i64 %".2", i64 %".3")
{
entry:
  br label %"body"
body:
  %".5" = getelementptr {ptr, ptr, i64, float, ptr, i64}, ptr %".1", i32 0, i32 0
  %".6" = load ptr, ptr %".5"
  %".7" = getelementptr {ptr, ptr, i64, float, ptr, i64}, ptr %".1", i32 0, i32 1
  %".8" = load ptr, ptr %".7"
  %".9" = getelementptr {ptr, ptr, i64, float, ptr, i64}, ptr %".1", i32 0, i32 2
  %".10" = load i64, ptr %".9"
  %".11" = getelementptr {ptr, ptr, i64, float, ptr, i64}, ptr %".1", i32 0, i32 3
  %".12" = load float, ptr %".11"
  %".13" = getelementptr {ptr, ptr, i64, float, ptr, i64}, ptr %".1", i32 0, i32 4
  %".14" = load ptr, ptr %".13"
  %".15" = getelementptr {ptr, ptr, i64, float, ptr, i64}, ptr %".1", i32 0, i32 5
  %".16" = load i64, ptr %".15"
  %".17" = trunc i64 %".2" to i32
  %".18" = trunc i64 %".3" to i32
  br label %"for"
for.end:
  ret void
for:
  %".20" = phi  i32 [%".17", %"body"], [%".35", %"for.next"]
  %".21" = icmp slt i32 %".20", %".18"
  br i1 %".21", label %"for.body", label %"for.end"
for.body:
  %".23" = sext i32 %".20" to i64
  %".24" = getelementptr inbounds float, ptr %".8", i64 %".23"
  %".25" = load float, ptr %".24"
  %".26" = fmul reassoc afn arcp nsz float %".12", %".25"
  %".27" = sext i32 %".20" to i64
  %".28" = getelementptr inbounds float, ptr %".14", i64 %".27"
  %".29" = load float, ptr %".28"
  %".30" = fadd reassoc afn arcp nsz float %".26", %".29"
  %".31" = sext i32 %".20" to i64
  %".32" = getelementptr inbounds float, ptr %".14", i64 %".31"
  store float %".30", ptr %".32"
  br label %"for.next"
for.next:
  %".35" = add nsw i32 %".20", 1
  br label %"for"
}

declare void @"qd_rt4_parallel_for"(ptr %".1", ptr %".2", i64 %".3", i64 %".4", i32 %".5", i64 %".6", ptr %".7")
