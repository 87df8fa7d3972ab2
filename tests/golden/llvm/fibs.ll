; ModuleID = "qd_fibs_HASH"
target triple = "HOST"
target datalayout = "HOST"

define internal i32 @"qd_fibs_HASH.body"(ptr %".1", ptr %".2")
{
entry:
  %"frame" = alloca {ptr, ptr, i64}
  br label %"body"
body:
  %".4" = load ptr, ptr %".2"
  %".5" = getelementptr i64, ptr %".2", i64 1
  %".6" = load i64, ptr %".5"
  %".7" = trunc i64 %".6" to i32
  %".8" = getelementptr {ptr, ptr, i64}, ptr %"frame", i32 0, i32 0
  store ptr %".1", ptr %".8"
  %".10" = getelementptr {ptr, ptr, i64}, ptr %"frame", i32 0, i32 1
  store ptr %".4", ptr %".10"
  %".12" = getelementptr {ptr, ptr, i64}, ptr %"frame", i32 0, i32 2
  store i64 %".6", ptr %".12"
  %".14" = getelementptr {i32, i32, i64, i64, i64, i64, ptr, ptr, ptr}, ptr %".1", i32 0, i32 0
  %".15" = load i32, ptr %".14"
  %".16" = sext i32 %".7" to i64
  call void @"qd_rt4_parallel_for"(void (ptr, i64, i64)* @"qd_fibs_HASH.task1", ptr %"frame", i64 0, i64 %".16", i32 %".15", i64 468, ptr %".1")
  ret i32 0
}

define i32 @"qd_fibs_HASH"(ptr %".1", ptr %".2")
{
entry:
  %"mxcsr.caller" = alloca i32
  %"mxcsr.kernel" = alloca i32
  call void @"llvm.x86.sse.stmxcsr"(ptr %"mxcsr.caller")
  %".5" = load i32, ptr %"mxcsr.caller"
  %".6" = or i32 %".5", 32768
  store i32 %".6", ptr %"mxcsr.kernel"
  call void @"llvm.x86.sse.ldmxcsr"(ptr %"mxcsr.kernel")
  %".9" = call i32 @"qd_fibs_HASH.body"(ptr %".1", ptr %".2")
  call void @"llvm.x86.sse.ldmxcsr"(ptr %"mxcsr.caller")
  ret i32 %".9"
}

declare void @"llvm.x86.sse.stmxcsr"(ptr %".1")

declare void @"llvm.x86.sse.ldmxcsr"(ptr %".1")

define internal i32 @"qd_fibs_HASH_f0"(ptr %".1", i32 %".2", ptr %".3")
{
entry:
  %"n" = alloca i32
  %"fib.result" = alloca i32
  %"fib.result.1" = alloca i32
  br label %"body"
body:
  store i32 %".2", ptr %"n"
  %".6" = load i32, ptr %"n"
  %".7" = icmp slt i32 %".6", 2
  br i1 %".7", label %"if.then", label %"if.else"
if.then:
  %".9" = load i32, ptr %"n"
  store i32 %".9", ptr %".3"
  ret i32 0
if.else:
  br label %"if.end"
if.end:
  %".14" = load i32, ptr %"n"
  %".15" = sub i32 %".14", 1
  store i32 0, ptr %"fib.result"
  %".17" = call i32 @"qd_fibs_HASH_f0"(ptr %".1", i32 %".15", ptr %"fib.result")
  %".18" = icmp ne i32 %".17", 0
  br i1 %".18", label %"error_exit", label %"call.ok"
dead:
  br label %"if.end"
call.ok:
  %".21" = load i32, ptr %"fib.result"
  %".22" = load i32, ptr %"n"
  %".23" = sub i32 %".22", 2
  store i32 0, ptr %"fib.result.1"
  %".25" = call i32 @"qd_fibs_HASH_f0"(ptr %".1", i32 %".23", ptr %"fib.result.1")
  %".26" = icmp ne i32 %".25", 0
  br i1 %".26", label %"error_exit", label %"call.ok.1"
error_exit:
  ret i32 1
call.ok.1:
  %".28" = load i32, ptr %"fib.result.1"
  %".29" = add i32 %".21", %".28"
  store i32 %".29", ptr %".3"
  ret i32 0
dead.1:
  ret i32 0
}

define internal void @"qd_fibs_HASH.task1"(ptr %".1", i64 %".2", i64 %".3")
{
entry:
  %"fib.result" = alloca i32
  br label %"body"
body:
  %".5" = getelementptr {ptr, ptr, i64}, ptr %".1", i32 0, i32 0
  %".6" = load ptr, ptr %".5"
  %".7" = getelementptr {ptr, ptr, i64}, ptr %".1", i32 0, i32 1
  %".8" = load ptr, ptr %".7"
  %".9" = getelementptr {ptr, ptr, i64}, ptr %".1", i32 0, i32 2
  %".10" = load i64, ptr %".9"
  %".11" = trunc i64 %".2" to i32
  %".12" = trunc i64 %".3" to i32
  br label %"for"
for.end:
  ret void
for:
  %".14" = phi  i32 [%".11", %"body"], [%".27", %"for.next"]
  %".15" = icmp slt i32 %".14", %".12"
  br i1 %".15", label %"for.body", label %"for.end"
for.body:
  store i32 0, ptr %"fib.result"
  %".18" = call i32 @"qd_fibs_HASH_f0"(ptr %".6", i32 %".14", ptr %"fib.result")
  %".19" = icmp ne i32 %".18", 0
  br i1 %".19", label %"error_exit", label %"call.ok"
for.next:
  %".27" = add nsw i32 %".14", 1
  br label %"for"
call.ok:
  %".22" = load i32, ptr %"fib.result"
  %".23" = sext i32 %".14" to i64
  %".24" = getelementptr inbounds i32, ptr %".8", i64 %".23"
  store i32 %".22", ptr %".24"
  br label %"for.next"
error_exit:
  ret void
}

declare void @"qd_rt4_parallel_for"(ptr %".1", ptr %".2", i64 %".3", i64 %".4", i32 %".5", i64 %".6", ptr %".7")
