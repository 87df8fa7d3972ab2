; The quadrants native runtime (ABI 1): parallel loops and error recording, shared by every kernel.
;
; qd_rt{{ABI}}_parallel_for(task, frame, begin, end, nthreads, grain, ctx) runs task(frame, lo, hi) over
; [begin, end). Small ranges run inline. Larger ones are cut into chunks that threads take from an atomic
; counter (dynamic scheduling). The threads come from a process-wide pool of workers that sleep on a futex
; between launches (a launch costs a wake-up, not a thread creation); when the pool is busy (another Python
; thread is launching) the launch starts its own threads instead. After fork() the child has no workers
; (a fork handler resets the pool).
;
; Pool protocol: `epoch` is a seqlock. The launching thread (holding `lock`) makes it odd, writes `job`,
; `helpers` and `active`, makes it even again and wakes the workers. A worker that sees a new even epoch
; reads job/helpers, re-reads the epoch to check they belong together, and if its index < helpers runs chunks,
; then decrements `active`; the last one wakes the launcher, which waits for `active` == 0.
;
; {{SYS_FUTEX}} is replaced with the futex syscall number of the target.

%job = type { ptr, ptr, i64, i64, i64, ptr }            ; task, frame, next, end, chunk, ctx
%pool = type { i32, i32, i32, i32, i32, ptr, i32 }      ; lock, epoch, active, nworkers, helpers, job, atfork

@qd_rt{{ABI}}_pool = internal global %pool zeroinitializer

declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_join(i64, ptr)
declare i32 @pthread_detach(i64)
declare i32 @__register_atfork(ptr, ptr, ptr, ptr)  ; glibc's pthread_atfork (which is not an exported symbol)
declare i64 @syscall(i64, ...)
declare i32 @sched_yield()

define internal void @futex_wait(ptr %addr, i32 %val) {
  %r = call i64 (i64, ...) @syscall(i64 {{SYS_FUTEX}}, ptr %addr, i32 128, i32 %val, ptr null)
  ret void
}

define internal void @futex_wake(ptr %addr, i32 %count) {
  %r = call i64 (i64, ...) @syscall(i64 {{SYS_FUTEX}}, ptr %addr, i32 129, i32 %count)
  ret void
}

; The kernels' floating-point mode on this thread: denormal results flush to zero (the target's
; instructions, runtime_ir.py). Workers set it before each job (the launching thread's entry already has).
define internal void @set_ftz() {
{{SET_FTZ}}

; Take chunks until none are left or a check failed (ctx->error != 0).
define internal void @run_chunks(ptr %job) {
entry:
  call void @set_ftz()
  %task.p = getelementptr %job, ptr %job, i32 0, i32 0
  %task = load ptr, ptr %task.p
  %frame.p = getelementptr %job, ptr %job, i32 0, i32 1
  %frame = load ptr, ptr %frame.p
  %next = getelementptr %job, ptr %job, i32 0, i32 2
  %end.p = getelementptr %job, ptr %job, i32 0, i32 3
  %end = load i64, ptr %end.p
  %chunk.p = getelementptr %job, ptr %job, i32 0, i32 4
  %chunk = load i64, ptr %chunk.p
  %ctx.p = getelementptr %job, ptr %job, i32 0, i32 5
  %ctx = load ptr, ptr %ctx.p
  %err.p = getelementptr i8, ptr %ctx, i64 4
  br label %loop
loop:
  %err = load atomic i32, ptr %err.p monotonic, align 4
  %failed = icmp ne i32 %err, 0
  br i1 %failed, label %out, label %take
take:
  %lo = atomicrmw add ptr %next, i64 %chunk monotonic
  %empty = icmp sge i64 %lo, %end
  br i1 %empty, label %out, label %run
run:
  %hi0 = add i64 %lo, %chunk
  %over = icmp sgt i64 %hi0, %end
  %hi = select i1 %over, i64 %end, i64 %hi0
  call void %task(ptr %frame, i64 %lo, i64 %hi)
  br label %loop
out:
  ret void
}

define internal ptr @spawned_worker(ptr %job) {
  call void @run_chunks(ptr %job)
  ret ptr null
}

; A pool worker. Its argument packs (epoch at creation << 32) | index.
define internal ptr @pool_worker(ptr %arg) {
entry:
  %bits = ptrtoint ptr %arg to i64
  %index = trunc i64 %bits to i32
  %hi = lshr i64 %bits, 32
  %seen0 = trunc i64 %hi to i32
  %seen = alloca i32
  %spins = alloca i32
  store i32 %seen0, ptr %seen
  %epoch.p = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 1
  %active.p = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 2
  %helpers.p = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 4
  %job.p = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 5
  br label %wait
wait:
  store i32 0, ptr %spins
  br label %poll
poll:
  %e = load atomic i32, ptr %epoch.p seq_cst, align 4
  %s = load i32, ptr %seen
  %changed = icmp ne i32 %e, %s
  %low = and i32 %e, 1
  %even = icmp eq i32 %low, 0
  %ready = and i1 %changed, %even
  br i1 %ready, label %take, label %idle
idle:
  %n = load i32, ptr %spins
  %n1 = add i32 %n, 1
  store i32 %n1, ptr %spins
  %tired = icmp sgt i32 %n1, 64
  br i1 %tired, label %sleep, label %yield
yield:
  %y = call i32 @sched_yield()
  br label %poll
sleep:
  %s2 = load i32, ptr %seen
  call void @futex_wait(ptr %epoch.p, i32 %s2)
  br label %poll
take:
  %job = load ptr, ptr %job.p
  %helpers = load i32, ptr %helpers.p
  %e2 = load atomic i32, ptr %epoch.p seq_cst, align 4
  %same = icmp eq i32 %e2, %e
  br i1 %same, label %got, label %poll
got:
  store i32 %e, ptr %seen
  %mine = icmp slt i32 %index, %helpers
  br i1 %mine, label %work, label %wait
work:
  call void @run_chunks(ptr %job)
  %old = atomicrmw sub ptr %active.p, i32 1 seq_cst
  %last = icmp eq i32 %old, 1
  br i1 %last, label %wake, label %wait
wake:
  call void @futex_wake(ptr %active.p, i32 1)
  br label %wait
}

define internal void @after_fork_child() {
  %lock = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 0
  store i32 0, ptr %lock
  %active = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 2
  store i32 0, ptr %active
  %nw = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 3
  store i32 0, ptr %nw
  ret void
}

; Make sure `want` workers exist (the lock is held); returns how many do.
define internal i32 @ensure_workers(i32 %want) {
entry:
  %atfork.p = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 6
  %registered = load i32, ptr %atfork.p
  %todo = icmp eq i32 %registered, 0
  br i1 %todo, label %register, label %start
register:
  %r = call i32 @__register_atfork(ptr null, ptr null, ptr @after_fork_child, ptr null)
  store i32 1, ptr %atfork.p
  br label %start
start:
  %nw.p = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 3
  %epoch.p = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 1
  %tid = alloca i64
  br label %loop
loop:
  %nw = load i32, ptr %nw.p
  %enough = icmp sge i32 %nw, %want
  br i1 %enough, label %out, label %create
create:
  %e = load atomic i32, ptr %epoch.p seq_cst, align 4
  %e64 = zext i32 %e to i64
  %ehi = shl i64 %e64, 32
  %idx = zext i32 %nw to i64
  %packed = or i64 %ehi, %idx
  %arg = inttoptr i64 %packed to ptr
  %rc = call i32 @pthread_create(ptr %tid, ptr null, ptr @pool_worker, ptr %arg)
  %ok = icmp eq i32 %rc, 0
  br i1 %ok, label %created, label %out
created:
  %t = load i64, ptr %tid
  %d = call i32 @pthread_detach(i64 %t)
  %nw1 = add i32 %nw, 1
  store i32 %nw1, ptr %nw.p
  br label %loop
out:
  %have = load i32, ptr %nw.p
  ret i32 %have
}

define void @qd_rt{{ABI}}_parallel_for(ptr %task, ptr %frame, i64 %begin, i64 %end, i32 %nthreads, i64 %grain, ptr %ctx) {
entry:
  %n = sub i64 %end, %begin
  %none = icmp sle i64 %n, 0
  br i1 %none, label %done, label %check
check:
  %one = icmp sle i32 %nthreads, 1
  %grain2 = add i64 %grain, %grain
  %few = icmp slt i64 %n, %grain2
  %small = or i1 %one, %few
  br i1 %small, label %inline, label %split
inline:
  call void %task(ptr %frame, i64 %begin, i64 %end)
  br label %done
split:
  ; chunk = max(grain, n / (32 * nthreads)); helpers = min(nthreads, ceil(n / chunk)) - 1
  %nt = sext i32 %nthreads to i64
  %div = mul i64 %nt, 32
  %per = sdiv i64 %n, %div
  %bigger = icmp sgt i64 %per, %grain
  %chunk = select i1 %bigger, i64 %per, i64 %grain
  %cm1 = sub i64 %chunk, 1
  %np = add i64 %n, %cm1
  %chunks = sdiv i64 %np, %chunk
  %lt = icmp slt i64 %chunks, %nt
  %used = select i1 %lt, i64 %chunks, i64 %nt
  %helpers64 = sub i64 %used, 1
  %helpers = trunc i64 %helpers64 to i32
  %job = alloca %job
  %f0 = getelementptr %job, ptr %job, i32 0, i32 0
  store ptr %task, ptr %f0
  %f1 = getelementptr %job, ptr %job, i32 0, i32 1
  store ptr %frame, ptr %f1
  %f2 = getelementptr %job, ptr %job, i32 0, i32 2
  store i64 %begin, ptr %f2
  %f3 = getelementptr %job, ptr %job, i32 0, i32 3
  store i64 %end, ptr %f3
  %f4 = getelementptr %job, ptr %job, i32 0, i32 4
  store i64 %chunk, ptr %f4
  %f5 = getelementptr %job, ptr %job, i32 0, i32 5
  store ptr %ctx, ptr %f5
  %lock.p = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 0
  %cx = cmpxchg ptr %lock.p, i32 0, i32 1 seq_cst seq_cst
  %locked = extractvalue { i32, i1 } %cx, 1
  br i1 %locked, label %pool, label %spawn

pool:
  %have = call i32 @ensure_workers(i32 %helpers)
  %fewer = icmp slt i32 %have, %helpers
  %h = select i1 %fewer, i32 %have, i32 %helpers
  %epoch.p = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 1
  %active.p = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 2
  %helpers.p = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 4
  %jobp.p = getelementptr %pool, ptr @qd_rt{{ABI}}_pool, i32 0, i32 5
  %odd = atomicrmw add ptr %epoch.p, i32 1 seq_cst
  store ptr %job, ptr %jobp.p
  store i32 %h, ptr %helpers.p
  store atomic i32 %h, ptr %active.p seq_cst, align 4
  %even = atomicrmw add ptr %epoch.p, i32 1 seq_cst
  call void @futex_wake(ptr %epoch.p, i32 2147483647)
  call void @run_chunks(ptr %job)
  br label %join
join:
  %a = load atomic i32, ptr %active.p seq_cst, align 4
  %finished = icmp eq i32 %a, 0
  br i1 %finished, label %unlock, label %await
await:
  call void @futex_wait(ptr %active.p, i32 %a)
  br label %join
unlock:
  store atomic i32 0, ptr %lock.p seq_cst, align 4
  br label %done

spawn:
  ; The pool is busy: start this launch's own threads and join them.
  %tids = alloca i64, i64 %used
  %oks = alloca i1, i64 %used
  br label %spawn.loop
spawn.loop:
  %i = phi i64 [0, %spawn], [%i1, %spawn.next]
  %more = icmp slt i64 %i, %helpers64
  br i1 %more, label %spawn.one, label %spawn.run
spawn.one:
  %tp = getelementptr i64, ptr %tids, i64 %i
  %rc = call i32 @pthread_create(ptr %tp, ptr null, ptr @spawned_worker, ptr %job)
  %okv = icmp eq i32 %rc, 0
  %op = getelementptr i1, ptr %oks, i64 %i
  store i1 %okv, ptr %op
  br label %spawn.next
spawn.next:
  %i1 = add i64 %i, 1
  br label %spawn.loop
spawn.run:
  call void @run_chunks(ptr %job)
  br label %join.loop
join.loop:
  %k = phi i64 [0, %spawn.run], [%k1, %join.next]
  %jmore = icmp slt i64 %k, %helpers64
  br i1 %jmore, label %join.one, label %done
join.one:
  %okp = getelementptr i1, ptr %oks, i64 %k
  %created = load i1, ptr %okp
  br i1 %created, label %join.it, label %join.next
join.it:
  %tp2 = getelementptr i64, ptr %tids, i64 %k
  %tid = load i64, ptr %tp2
  %jr = call i32 @pthread_join(i64 %tid, ptr null)
  br label %join.next
join.next:
  %k1 = add i64 %k, 1
  br label %join.loop

done:
  ret void
}

; The first failing check of a launch records where and why; later ones are ignored.
define void @qd_rt{{ABI}}_record_error(ptr %ctx, i32 %code, i64 %site, i64 %index, i64 %dim, i64 %extent) {
entry:
  %err.p = getelementptr i8, ptr %ctx, i64 4
  %cx = cmpxchg ptr %err.p, i32 0, i32 %code monotonic monotonic
  %won = extractvalue { i32, i1 } %cx, 1
  br i1 %won, label %store, label %out
store:
  %p.site = getelementptr i8, ptr %ctx, i64 8
  store i64 %site, ptr %p.site
  %p.index = getelementptr i8, ptr %ctx, i64 16
  store i64 %index, ptr %p.index
  %p.dim = getelementptr i8, ptr %ctx, i64 24
  store i64 %dim, ptr %p.dim
  %p.extent = getelementptr i8, ptr %ctx, i64 32
  store i64 %extent, ptr %p.extent
  br label %out
out:
  ret void
}

; Float powers with an integer exponent. LLVM turns `pow(x, (float)n)` into `llvm.powi`, which becomes a call to
; these compiler-runtime helpers; defined here (exported with the runtime, loaded with global symbols) so a kernel
; never depends on libgcc being loaded. Repeated squaring, as the compiler runtimes do it.
define float @__powisf2(float %a, i32 %b) {
entry:
  %neg = icmp slt i32 %b, 0
  %nb = sub i32 0, %b
  %n0 = select i1 %neg, i32 %nb, i32 %b
  br label %loop
loop:
  %r = phi float [ 1.0, %entry ], [ %r2, %body ]
  %x = phi float [ %a, %entry ], [ %x2, %body ]
  %n = phi i32 [ %n0, %entry ], [ %n2, %body ]
  %done = icmp eq i32 %n, 0
  br i1 %done, label %exit, label %body
body:
  %bit = and i32 %n, 1
  %odd = icmp ne i32 %bit, 0
  %rm = fmul float %r, %x
  %r2 = select i1 %odd, float %rm, float %r
  %x2 = fmul float %x, %x
  %n2 = lshr i32 %n, 1
  br label %loop
exit:
  %inv = fdiv float 1.0, %r
  %res = select i1 %neg, float %inv, float %r
  ret float %res
}

define double @__powidf2(double %a, i32 %b) {
entry:
  %neg = icmp slt i32 %b, 0
  %nb = sub i32 0, %b
  %n0 = select i1 %neg, i32 %nb, i32 %b
  br label %loop
loop:
  %r = phi double [ 1.0, %entry ], [ %r2, %body ]
  %x = phi double [ %a, %entry ], [ %x2, %body ]
  %n = phi i32 [ %n0, %entry ], [ %n2, %body ]
  %done = icmp eq i32 %n, 0
  br i1 %done, label %exit, label %body
body:
  %bit = and i32 %n, 1
  %odd = icmp ne i32 %bit, 0
  %rm = fmul double %r, %x
  %r2 = select i1 %odd, double %rm, double %r
  %x2 = fmul double %x, %x
  %n2 = lshr i32 %n, 1
  br label %loop
exit:
  %inv = fdiv double 1.0, %r
  %res = select i1 %neg, double %inv, double %r
  ret double %res
}

; Half-precision conversions. Where the target has no F16C instructions (x86-64-v2 and older), LLVM lowers f16
; arithmetic through these compiler-runtime helpers; defined here in integer arithmetic (and a round-to-nearest-even
; for subnormals) so that such code loads without a libgcc that has them. IEEE semantics: subnormals kept, NaNs quiet.
define float @__extendhfsf2(half %h) {
entry:
  %b = bitcast half %h to i16
  %w = zext i16 %b to i32
  %sbit = and i32 %w, 32768
  %sign = shl i32 %sbit, 16
  %e1 = lshr i32 %w, 10
  %exp = and i32 %e1, 31
  %man = and i32 %w, 1023
  %isspecial = icmp eq i32 %exp, 31
  %iszero = icmp eq i32 %exp, 0
  br i1 %isspecial, label %special, label %finite
special:
  %m13 = shl i32 %man, 13
  %nanbits = or i32 %m13, 2139095040
  %sp = or i32 %nanbits, %sign
  %spf = bitcast i32 %sp to float
  ret float %spf
finite:
  br i1 %iszero, label %small, label %normal
normal:
  %e2 = add i32 %exp, 112
  %e3 = shl i32 %e2, 23
  %m2 = shl i32 %man, 13
  %nb = or i32 %e3, %m2
  %nbs = or i32 %nb, %sign
  %nf = bitcast i32 %nbs to float
  ret float %nf
small:                                    ; zero or subnormal: man * 2**-24, exactly
  %mf = uitofp i32 %man to float
  %v = fmul float %mf, 0x3E70000000000000
  %vb = bitcast float %v to i32
  %vs = or i32 %vb, %sign
  %vf = bitcast i32 %vs to float
  ret float %vf
}

define half @__truncsfhf2(float %f) {
entry:
  %bits = bitcast float %f to i32
  %s1 = lshr i32 %bits, 16
  %sign = and i32 %s1, 32768
  %abs = and i32 %bits, 2147483647
  %isnan = icmp ugt i32 %abs, 2139095040
  br i1 %isnan, label %nan, label %notnan
nan:                                      ; quiet, keeping the payload's top bits
  %p1 = lshr i32 %abs, 13
  %p2 = and i32 %p1, 1023
  %p3 = or i32 %p2, 512
  %nanh = or i32 %p3, 31744
  br label %done
notnan:
  %isinf = icmp uge i32 %abs, 1199566848     ; 65520.0 and up (inf included) round to infinity
  br i1 %isinf, label %inf, label %finite
inf:
  br label %done
finite:
  %isnormal = icmp uge i32 %abs, 947912704   ; 2**-14, the smallest normal half
  br i1 %isnormal, label %normal, label %small
normal:
  %rebased = sub i32 %abs, 939524096         ; exponent bias 127 -> 15
  %h0 = lshr i32 %rebased, 13
  %rem = and i32 %abs, 8191
  %above = icmp ugt i32 %rem, 4096
  %tie = icmp eq i32 %rem, 4096
  %odd0 = and i32 %h0, 1
  %odd = icmp ne i32 %odd0, 0
  %tieup = and i1 %tie, %odd
  %up = or i1 %above, %tieup
  %inc = zext i1 %up to i32
  %hn = add i32 %h0, %inc
  br label %done
small:                                    ; subnormal or zero: round(|f| * 2**24) to nearest even (1024: 2**-14)
  %af = bitcast i32 %abs to float
  %scaled = fmul float %af, 0x4170000000000000
  %r = call float @llvm.rint.f32(float %scaled)
  %hs = fptoui float %r to i32
  br label %done
done:
  %h = phi i32 [ %nanh, %nan ], [ 31744, %inf ], [ %hn, %normal ], [ %hs, %small ]
  %hsg = or i32 %h, %sign
  %h16 = trunc i32 %hsg to i16
  %out = bitcast i16 %h16 to half
  ret half %out
}

define half @__truncdfhf2(double %d) {
entry:
  %bits = bitcast double %d to i64
  %s1 = lshr i64 %bits, 48
  %sign64 = and i64 %s1, 32768
  %sign = trunc i64 %sign64 to i32
  %abs = and i64 %bits, 9223372036854775807
  %isnan = icmp ugt i64 %abs, 9218868437227405312
  br i1 %isnan, label %nan, label %notnan
nan:
  %p1 = lshr i64 %abs, 42
  %p2 = trunc i64 %p1 to i32
  %p3 = and i32 %p2, 1023
  %p4 = or i32 %p3, 512
  %nanh = or i32 %p4, 31744
  br label %done
notnan:
  %isinf = icmp uge i64 %abs, 4679237813814689792   ; 65520.0
  br i1 %isinf, label %inf, label %finite
inf:
  br label %done
finite:
  %isnormal = icmp uge i64 %abs, 4544132024016830464  ; 2**-14
  br i1 %isnormal, label %normal, label %small
normal:
  %rebased = sub i64 %abs, 4539628424389459968      ; exponent bias 1023 -> 15
  %h64 = lshr i64 %rebased, 42
  %h0 = trunc i64 %h64 to i32
  %rem = and i64 %abs, 4398046511103
  %above = icmp ugt i64 %rem, 2199023255552
  %tie = icmp eq i64 %rem, 2199023255552
  %odd0 = and i32 %h0, 1
  %odd = icmp ne i32 %odd0, 0
  %tieup = and i1 %tie, %odd
  %up = or i1 %above, %tieup
  %inc = zext i1 %up to i32
  %hn = add i32 %h0, %inc
  br label %done
small:
  %af = bitcast i64 %abs to double
  %scaled = fmul double %af, 0x4170000000000000
  %r = call double @llvm.rint.f64(double %scaled)
  %hs = fptoui double %r to i32
  br label %done
done:
  %h = phi i32 [ %nanh, %nan ], [ 31744, %inf ], [ %hn, %normal ], [ %hs, %small ]
  %hsg = or i32 %h, %sign
  %h16 = trunc i32 %hsg to i16
  %out = bitcast i16 %h16 to half
  ret half %out
}

declare float @llvm.rint.f32(float)
declare double @llvm.rint.f64(double)
