#!/usr/bin/env python3
"""pipeline_heapq.py -- the peer a user would write: bench_epoch's training input pipeline as a
plain-Python discrete-event model on heapq (no third-party packages), for bench_compare.

Same structure and parameters as bench_epoch (test catalog: 8 cores / 16 threads with SMT gain
0.25, an NVMe of 5,000 MB/s, 50 us and 64 slots, 37.5 GB/s of memory bus with 10 GB/s per copy,
PCIe 24 GB/s; batch 256, 8 workers, prefetch 2, pinned, non-blocking, sync every step; 320
kernels of 300 us dispatched at 25 us each): storage -> workers (read, decode) -> collate ->
pin -> H2D copy -> GPU step. Shared resources are processor-sharing servers with virtual time
and one pending completion each, superseded ones skipped by generation, as most hand-written
models do. It models no timeline, metrics or page cache. Usage: pipeline_heapq.py [SAMPLES]
(default 128,000: a tenth of the epoch, because a whole one takes minutes in Python). Prints
one line of key=value figures for bench_compare."""
import heapq
import math
import random
import sys
import time

US = 1000  # ns


class Sim:
    """The event loop: (time ns, insertion order, function, arguments) on one heap."""

    def __init__(self):
        self.now, self.seq, self.events, self.q = 0, 0, 0, []

    def at(self, t, fn, *args):
        heapq.heappush(self.q, (t, self.seq, fn, args))
        self.seq += 1

    def run(self):
        q = self.q
        while q:
            t, _, fn, args = heapq.heappop(q)
            self.now = t
            self.events += 1
            fn(*args)


class PS:
    """Processor sharing: every active job progresses at min(per_job_max, capacity(n) / n)."""

    def __init__(self, sim, capacity, per_job_max):
        self.sim, self.capacity, self.per_job_max = sim, capacity, per_job_max
        self.v, self.t_last, self.jobs, self.seq, self.gen = 0.0, 0, [], 0, 0

    def rate(self):
        n = len(self.jobs)
        return min(self.per_job_max, self.capacity(n) / n) if n else 0.0

    def advance(self):
        self.v += self.rate() * (self.sim.now - self.t_last)
        self.t_last = self.sim.now

    def submit(self, work, fn, *args):
        self.advance()
        heapq.heappush(self.jobs, (self.v + work, self.seq, fn, args))
        self.seq += 1
        self.reschedule()

    def reschedule(self):
        if self.jobs:
            self.gen += 1
            left = self.jobs[0][0] - self.v
            dt = math.ceil(left / self.rate()) if left > 0 else 0
            self.sim.at(self.sim.now + dt, self.fire, self.gen)

    def fire(self, gen):
        if gen != self.gen:
            return  # superseded by a later arrival or departure
        self.advance()
        while self.jobs and self.jobs[0][0] <= self.v + 1e-9 * (abs(self.v) + 1):
            _, _, fn, args = heapq.heappop(self.jobs)
            fn(*args)
        self.reschedule()


class Storage:
    """queue_depth slots; a read spends the latency, then shares the bandwidth."""

    def __init__(self, sim, mbps, latency_us, depth):
        self.sim, self.latency, self.depth, self.busy, self.waiting = sim, latency_us * US, depth, 0, []
        rate = mbps * 1e6 / 1e9
        self.bw = PS(sim, lambda n: rate, rate)

    def read(self, nbytes, fn, *args):
        if self.busy < self.depth:
            self.busy += 1
            self.sim.at(self.sim.now + self.latency, self.bw.submit, nbytes, self.done, fn, args)
        else:
            self.waiting.append((nbytes, fn, args))

    def done(self, fn, args):
        self.busy -= 1
        if self.waiting:
            nbytes, f, a = self.waiting.pop(0)
            self.read(nbytes, f, *a)
        fn(*args)


class Pipeline:
    def __init__(self, samples, seed=1):
        self.sim = sim = Sim()
        self.rng = random.Random(seed)
        smt = lambda n: (n if n <= 8 else 8 + 0.25 * min(n - 8, 8))
        self.cpu = PS(sim, smt, 1.0)  # work: ns of one reference core
        self.mem = PS(sim, lambda n: 100 * 0.75 / 2, 10.0)  # bytes per ns
        self.link = PS(sim, lambda n: 24.0, 24.0)
        self.storage = Storage(sim, 5000, 50, 64)
        self.bs, self.workers, self.prefetch = 256, 8, 2
        self.sample_bytes, self.input_bytes = 110_000, 602_112
        self.batches = (samples + self.bs - 1) // self.bs
        self.samples = samples
        s2 = math.log1p(0.3 * 0.3)
        self.mu, self.sigma = -s2 / 2, math.sqrt(s2)
        self.queues = [[] for _ in range(self.workers)]
        self.busy = [False] * self.workers
        self.alive = [False] * self.workers
        self.next_send = self.next_yield = self.outstanding = 0
        self.ready, self.pin_q, self.pin_busy, self.waiting = set(), [], False, False
        self.stream, self.gpu_busy, self.done_items, self.items = [], False, 0, 0
        self.sync_wait = None
        self.step = 0

    def batch_samples(self, b):
        return min(self.bs, self.samples - b * self.bs)

    # ---- DataLoader ----
    def start(self):
        for w in range(self.workers):
            self.cpu.submit(50_000 * US, self.worker_started, w)
        self.try_send()
        self.main_step()

    def worker_started(self, w):
        self.alive[w] = True
        self.start_batch(w)

    def try_send(self):
        while self.next_send < self.batches and self.outstanding < self.prefetch * self.workers:
            w = self.next_send % self.workers
            self.queues[w].append(self.next_send)
            self.next_send += 1
            self.outstanding += 1
            self.start_batch(w)

    def start_batch(self, w):
        if self.alive[w] and not self.busy[w] and self.queues[w]:
            self.busy[w] = True
            self.read_sample(w, self.queues[w].pop(0), 0)

    def read_sample(self, w, b, i):
        self.storage.read(self.sample_bytes, self.decode, w, b, i)

    def decode(self, w, b, i):
        mult = self.rng.lognormvariate(self.mu, self.sigma)
        self.cpu.submit(4000 * US * mult, self.decoded, w, b, i)

    def decoded(self, w, b, i):
        if i + 1 < self.batch_samples(b):
            self.read_sample(w, b, i + 1)
        else:
            self.mem.submit(self.batch_samples(b) * self.input_bytes, self.collated, w, b)

    def collated(self, w, b):
        self.busy[w] = False
        self.pin_q.append(b)
        self.start_pin()
        self.start_batch(w)

    def start_pin(self):
        if not self.pin_busy and self.pin_q:
            self.pin_busy = True
            b = self.pin_q.pop(0)
            self.mem.submit(self.batch_samples(b) * self.input_bytes, self.pinned, b)

    def pinned(self, b):
        self.pin_busy = False
        self.ready.add(b)
        self.start_pin()
        self.deliver()

    def deliver(self):
        if self.waiting and self.next_yield in self.ready:
            self.waiting = False
            self.ready.discard(self.next_yield)
            self.next_yield += 1
            self.outstanding -= 1
            self.sim.at(self.sim.now, self.batch_ready)
            self.try_send()

    # ---- GPU stream: kernels and copies run in order ----
    def enqueue(self, kind, amount):
        self.stream.append((kind, amount))
        self.items += 1
        self.gpu_next()

    def gpu_next(self):
        if self.gpu_busy or not self.stream:
            return
        self.gpu_busy = True
        kind, amount = self.stream.pop(0)
        if kind == "kernel":
            self.sim.at(self.sim.now + amount, self.gpu_done)
        else:
            self.link.submit(amount, self.gpu_done)

    def gpu_done(self):
        self.gpu_busy = False
        self.done_items += 1
        self.gpu_next()
        if self.sync_wait is not None and self.done_items == self.items:
            fn, self.sync_wait = self.sync_wait, None
            fn()

    # ---- main thread: one training step per batch ----
    def main_step(self):
        if self.next_yield == self.batches:
            return
        self.waiting = True
        self.deliver()

    def batch_ready(self):
        self.cpu.submit(25 * US, self.copy_issued)

    def copy_issued(self):
        self.enqueue("copy", self.bs * self.input_bytes)
        self.dispatch(0)

    def dispatch(self, k):
        if k == 320:
            self.cpu.submit(500 * US, self.step_tail)
        else:
            self.cpu.submit(25 * US, self.launched, k)

    def launched(self, k):
        self.enqueue("kernel", 300 * US)
        self.dispatch(k + 1)

    def step_tail(self):
        self.step += 1
        if self.done_items == self.items:
            self.main_step()
        else:
            self.sync_wait = self.main_step


def main():
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 128_000
    p = Pipeline(samples)
    t0, c0 = time.perf_counter(), time.process_time()
    p.start()
    p.sim.run()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"samples={samples} steps={p.step} events={p.sim.events} wall_s={wall:.3f} "
          f"cpu_s={cpu:.3f} simulated_s={p.sim.now / 1e9:.3f}")


if __name__ == "__main__":
    main()
