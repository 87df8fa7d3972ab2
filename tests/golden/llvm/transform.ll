; ModuleID = "qd_transform_HASH"
target triple = "HOST"
target datalayout = "HOST"

define internal i32 @"qd_transform_HASH.body"(ptr %".1", ptr %".2")
{
entry:
  %"frame" = alloca {ptr, ptr, i64, i64}
  br label %"body"
body:
  %".4" = load ptr, ptr %".2"
  %".5" = getelementptr i64, ptr %".2", i64 1
  %".6" = load i64, ptr %".5"
  %".7" = getelementptr i64, ptr %".2", i64 2
  %".8" = load i64, ptr %".7"
  %".9" = trunc i64 %".6" to i32
  %".10" = trunc i64 %".8" to i32
  %".11" = getelementptr {ptr, ptr, i64, i64}, ptr %"frame", i32 0, i32 0
  store ptr %".1", ptr %".11"
  %".13" = getelementptr {ptr, ptr, i64, i64}, ptr %"frame", i32 0, i32 1
  store ptr %".4", ptr %".13"
  %".15" = getelementptr {ptr, ptr, i64, i64}, ptr %"frame", i32 0, i32 2
  store i64 %".6", ptr %".15"
  %".17" = getelementptr {ptr, ptr, i64, i64}, ptr %"frame", i32 0, i32 3
  store i64 %".8", ptr %".17"
  %".19" = getelementptr {i32, i32, i64, i64, i64, i64, ptr, ptr, ptr}, ptr %".1", i32 0, i32 0
  %".20" = load i32, ptr %".19"
  %".21" = sext i32 0 to i64
  %".22" = sext i32 %".9" to i64
  call void @"qd_rt3_parallel_for"(void (ptr, i64, i64)* @"qd_transform_HASH.task1", ptr %"frame", i64 %".21", i64 %".22", i32 %".20", i64 537, ptr %".1")
  ret i32 0
}

define i32 @"qd_transform_HASH"(ptr %".1", ptr %".2")
{
entry:
  %"mxcsr.caller" = alloca i32
  %"mxcsr.kernel" = alloca i32
  call void @"llvm.x86.sse.stmxcsr"(ptr %"mxcsr.caller")
  %".5" = load i32, ptr %"mxcsr.caller"
  %".6" = or i32 %".5", 32768
  store i32 %".6", ptr %"mxcsr.kernel"
  call void @"llvm.x86.sse.ldmxcsr"(ptr %"mxcsr.kernel")
  %".9" = call i32 @"qd_transform_HASH.body"(ptr %".1", ptr %".2")
  call void @"llvm.x86.sse.ldmxcsr"(ptr %"mxcsr.caller")
  ret i32 %".9"
}

declare void @"llvm.x86.sse.stmxcsr"(ptr %".1")

declare void @"llvm.x86.sse.ldmxcsr"(ptr %".1")

define internal void @"qd_transform_HASH.task1"(ptr %".1", i64 %".2", i64 %".3")
{
entry:
  %"m[0]" = alloca float
  %"m[1]" = alloca float
  %"m[2]" = alloca float
  %"m[3]" = alloca float
  %"v[0]" = alloca float
  %"v[1]" = alloca float
  %"w[0]" = alloca float
  %"w[1]" = alloca float
  br label %"body"
body:
  %".5" = getelementptr {ptr, ptr, i64, i64}, ptr %".1", i32 0, i32 0
  %".6" = load ptr, ptr %".5"
  %".7" = getelementptr {ptr, ptr, i64, i64}, ptr %".1", i32 0, i32 1
  %".8" = load ptr, ptr %".7"
  %".9" = getelementptr {ptr, ptr, i64, i64}, ptr %".1", i32 0, i32 2
  %".10" = load i64, ptr %".9"
  %".11" = getelementptr {ptr, ptr, i64, i64}, ptr %".1", i32 0, i32 3
  %".12" = load i64, ptr %".11"
  %".13" = trunc i64 %".2" to i32
  %".14" = trunc i64 %".3" to i32
  br label %"for"
for.end:
  ret void
for:
  %".16" = phi  i32 [%".13", %"body"], [%".81", %"for.next"]
  %".17" = icmp slt i32 %".16", %".14"
  br i1 %".17", label %"for.body", label %"for.end"
for.body:
  store float              0x0, ptr %"m[0]"
  store float 0xbff0000000000000, ptr %"m[1]"
  store float 0x3ff0000000000000, ptr %"m[2]"
  store float              0x0, ptr %"m[3]"
  %".23" = sext i32 %".16" to i64
  %".24" = sext i32 0 to i64
  %".25" = mul i64 %".23", %".12"
  %".26" = add i64 %".25", %".24"
  %".27" = getelementptr inbounds float, ptr %".8", i64 %".26"
  %".28" = load float, ptr %".27"
  %".29" = sext i32 %".16" to i64
  %".30" = sext i32 1 to i64
  %".31" = mul i64 %".29", %".12"
  %".32" = add i64 %".31", %".30"
  %".33" = getelementptr inbounds float, ptr %".8", i64 %".32"
  %".34" = load float, ptr %".33"
  store float %".28", ptr %"v[0]"
  store float %".34", ptr %"v[1]"
  %".37" = load float, ptr %"m[0]"
  %".38" = load float, ptr %"m[1]"
  %".39" = load float, ptr %"m[2]"
  %".40" = load float, ptr %"m[3]"
  %".41" = load float, ptr %"v[0]"
  %".42" = load float, ptr %"v[1]"
  %".43" = fmul reassoc afn arcp nsz float %".37", %".41"
  %".44" = fmul reassoc afn arcp nsz float %".38", %".42"
  %".45" = fadd reassoc afn arcp nsz float %".43", %".44"
  %".46" = fmul reassoc afn arcp nsz float %".39", %".41"
  %".47" = fmul reassoc afn arcp nsz float %".40", %".42"
  %".48" = fadd reassoc afn arcp nsz float %".46", %".47"
  %".49" = load float, ptr %"v[0]"
  %".50" = load float, ptr %"v[1]"
  %".51" = load float, ptr %"v[0]"
  %".52" = load float, ptr %"v[1]"
  %".53" = fmul reassoc afn arcp nsz float %".49", %".51"
  %".54" = fmul reassoc afn arcp nsz float %".50", %".52"
  %".55" = fadd reassoc afn arcp nsz float %".53", %".54"
  %".56" = load float, ptr %"v[0]"
  %".57" = load float, ptr %"v[1]"
  %".58" = fmul reassoc afn arcp nsz float %".55", %".56"
  %".59" = fmul reassoc afn arcp nsz float %".55", %".57"
  %".60" = fadd reassoc afn arcp nsz float %".45", %".58"
  %".61" = fadd reassoc afn arcp nsz float %".48", %".59"
  store float %".60", ptr %"w[0]"
  store float %".61", ptr %"w[1]"
  %".64" = load float, ptr %"w[0]"
  %".65" = load float, ptr %"w[1]"
  %".66" = sext i32 %".16" to i64
  %".67" = sext i32 0 to i64
  %".68" = mul i64 %".66", %".12"
  %".69" = add i64 %".68", %".67"
  %".70" = getelementptr inbounds float, ptr %".8", i64 %".69"
  store float %".64", ptr %".70"
  %".72" = load float, ptr %"w[0]"
  %".73" = load float, ptr %"w[1]"
  %".74" = sext i32 %".16" to i64
  %".75" = sext i32 1 to i64
  %".76" = mul i64 %".74", %".12"
  %".77" = add i64 %".76", %".75"
  %".78" = getelementptr inbounds float, ptr %".8", i64 %".77"
  store float %".73", ptr %".78"
  br label %"for.next"
for.next:
  %".81" = add nsw i32 %".16", 1
  br label %"for"
}

declare void @"qd_rt3_parallel_for"(ptr %".1", ptr %".2", i64 %".3", i64 %".4", i32 %".5", i64 %".6", ptr %".7")
