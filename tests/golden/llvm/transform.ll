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
  %".21" = sext i32 %".9" to i64
  call void @"qd_rt4_parallel_for"(void (ptr, i64, i64)* @"qd_transform_HASH.task1", ptr %"frame", i64 0, i64 %".21", i32 %".20", i64 537, ptr %".1")
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
  %".16" = phi  i32 [%".13", %"body"], [%".77", %"for.next"]
  %".17" = icmp slt i32 %".16", %".14"
  br i1 %".17", label %"for.body", label %"for.end"
for.body:
  store float              0x0, ptr %"m[0]"
  store float 0xbff0000000000000, ptr %"m[1]"
  store float 0x3ff0000000000000, ptr %"m[2]"
  store float              0x0, ptr %"m[3]"
  %".23" = sext i32 %".16" to i64
  %".24" = mul i64 %".23", %".12"
  %".25" = add i64 %".24", 0
  %".26" = getelementptr inbounds float, ptr %".8", i64 %".25"
  %".27" = load float, ptr %".26"
  %".28" = sext i32 %".16" to i64
  %".29" = mul i64 %".28", %".12"
  %".30" = add i64 %".29", 1
  %".31" = getelementptr inbounds float, ptr %".8", i64 %".30"
  %".32" = load float, ptr %".31"
  store float %".27", ptr %"v[0]"
  store float %".32", ptr %"v[1]"
  %".35" = load float, ptr %"m[0]"
  %".36" = load float, ptr %"m[1]"
  %".37" = load float, ptr %"m[2]"
  %".38" = load float, ptr %"m[3]"
  %".39" = load float, ptr %"v[0]"
  %".40" = load float, ptr %"v[1]"
  %".41" = fmul reassoc afn arcp nsz float %".35", %".39"
  %".42" = fmul reassoc afn arcp nsz float %".36", %".40"
  %".43" = fadd reassoc afn arcp nsz float %".41", %".42"
  %".44" = fmul reassoc afn arcp nsz float %".37", %".39"
  %".45" = fmul reassoc afn arcp nsz float %".38", %".40"
  %".46" = fadd reassoc afn arcp nsz float %".44", %".45"
  %".47" = load float, ptr %"v[0]"
  %".48" = load float, ptr %"v[1]"
  %".49" = load float, ptr %"v[0]"
  %".50" = load float, ptr %"v[1]"
  %".51" = fmul reassoc afn arcp nsz float %".47", %".49"
  %".52" = fmul reassoc afn arcp nsz float %".48", %".50"
  %".53" = fadd reassoc afn arcp nsz float %".51", %".52"
  %".54" = load float, ptr %"v[0]"
  %".55" = load float, ptr %"v[1]"
  %".56" = fmul reassoc afn arcp nsz float %".53", %".54"
  %".57" = fmul reassoc afn arcp nsz float %".53", %".55"
  %".58" = fadd reassoc afn arcp nsz float %".43", %".56"
  %".59" = fadd reassoc afn arcp nsz float %".46", %".57"
  store float %".58", ptr %"w[0]"
  store float %".59", ptr %"w[1]"
  %".62" = load float, ptr %"w[0]"
  %".63" = load float, ptr %"w[1]"
  %".64" = sext i32 %".16" to i64
  %".65" = mul i64 %".64", %".12"
  %".66" = add i64 %".65", 0
  %".67" = getelementptr inbounds float, ptr %".8", i64 %".66"
  store float %".62", ptr %".67"
  %".69" = load float, ptr %"w[0]"
  %".70" = load float, ptr %"w[1]"
  %".71" = sext i32 %".16" to i64
  %".72" = mul i64 %".71", %".12"
  %".73" = add i64 %".72", 1
  %".74" = getelementptr inbounds float, ptr %".8", i64 %".73"
  store float %".70", ptr %".74"
  br label %"for.next"
for.next:
  %".77" = add nsw i32 %".16", 1
  br label %"for"
}

declare void @"qd_rt4_parallel_for"(ptr %".1", ptr %".2", i64 %".3", i64 %".4", i32 %".5", i64 %".6", ptr %".7")
