/* trainer.c — the main thread's training loop (see pipeline.h):
 *   for batch in loader:                    # waits for the batch in order
 *       x = batch.to("cuda", non_blocking)  # H2D copy on the compute stream
 *       <ops of one step>                   # dispatch cost on the CPU, kernels onto the stream
 *       loss.item()                         # if sync_every_step: wait for the GPU to drain
 *   torch.cuda.synchronize()                # each epoch ends when the GPU is done
 * Under gradient accumulation a step takes further batches at its SIM_OP_NEXT_BATCH ops; when
 * the loader runs out there, the step ends without the rest (the optimizer step of a partial
 * accumulation is skipped, as `if (i + 1) % accum == 0: opt.step()` does).
 * A copy from pageable memory, or without non_blocking, blocks the main thread until the copy is
 * done, and since it is ordered on the stream, until every kernel before it is done too.
 * cudaLaunchKernel blocks while the launch queue is full. With CUDA graphs, one graph launch
 * replaces the step's per-op dispatch. */
#include "sim/core/pipeline.h"

#include "sim/base/err.h"
#include "sim/core/metrics.h"
#include "sim/core/timeline.h"

#include <stdlib.h>

enum {
    EV_BEGIN_EPOCH,
    EV_BATCH,
    EV_COPY_ISSUED,
    EV_COPY_DONE,
    EV_OP_DISPATCHED,
    EV_ROOM,
    EV_OP_WAITED,
    EV_GRAPH_LAUNCHED,
    EV_STEP_TAIL,
    EV_STEP_SYNCED,
    EV_EPOCH_SYNCED,
};

struct sim_trainer {
    sim_engine *e;
    const bool *observed; /* sim_engine_observed */
    uint32_t id;
    sim_trainer_config cfg;
    int epoch;
    int64_t step, batches; /* batches: the epoch's whole count, for numbering global steps */
    int64_t taken;         /* loader batches taken this epoch */
    bool at_next_batch;    /* the batch in flight was asked for by the NEXT_BATCH op at pc */
    int64_t batch;
    int64_t step_start_ns;
    int64_t phase_ns; /* start of what the main thread is doing now (dispatch, a wait) */
    size_t pc;
    bool done;
};

static int64_t global_step(const sim_trainer *t)
{
    return (int64_t)t->epoch * t->batches + t->step;
}

/* ---- what the main thread reports to the engine's observer (pipeline.h) ---- */

/* The main thread did `what` from start_ns to now. */
static void report(sim_trainer *t, sim_tl_what what, int64_t start_ns, int64_t a, int64_t b)
{
    if (!*t->observed) return;
    sim_observation o = {.kind = SIM_OBS_SPAN,
                         .rank = t->cfg.index,
                         .thread = SIM_TL_LANE_MAIN,
                         .what = (int)what,
                         .start_ns = start_ns,
                         .a = a,
                         .b = b};
    sim_engine_observe(t->e, &o);
}

/* The phase that began at phase_ns, `what`, is over. */
static void phase_done(sim_trainer *t, sim_tl_what what, int64_t a, int64_t b)
{
    report(t, what, t->phase_ns, a, b);
}

/* Stream item `seq` came from op `op` (-1: the input copy). */
static void report_item(sim_trainer *t, uint64_t seq, int op, sim_op_kind kind, int unit)
{
    if (!*t->observed) return;
    sim_observation o = {.kind = SIM_OBS_ITEM,
                         .rank = t->cfg.index,
                         .index = op,
                         .what = (int)kind,
                         .unit = unit,
                         .seq = seq,
                         .a = global_step(t)};
    sim_engine_observe(t->e, &o);
}

/* The launch of the kernel that will be item `seq` began with the current phase. */
static void report_launch(sim_trainer *t, uint64_t seq)
{
    if (!*t->observed) return;
    sim_observation o = {
        .kind = SIM_OBS_LAUNCH, .rank = t->cfg.index, .seq = seq, .start_ns = t->phase_ns};
    sim_engine_observe(t->e, &o);
}

static void begin_phase(sim_trainer *t)
{
    t->phase_ns = sim_engine_now(t->e);
}

static void set_main(sim_trainer *t, sim_main_state s)
{
    sim_metrics_main(t->cfg.metrics, t->cfg.index, s);
}

static void cpu_job(sim_trainer *t, int64_t ref_ns, uint32_t kind)
{
    begin_phase(t);
    sim_ps_submit_as(t->cfg.cpu, t->cfg.group, ref_ns > 0 ? (double)ref_ns : 0, t->id, kind, 0);
}

static void wait_gpu(sim_trainer *t, uint64_t seq, uint32_t kind)
{
    set_main(t, SIM_MAIN_SYNC);
    begin_phase(t);
    sim_gpu_notify(t->cfg.gpu, seq, t->id, kind);
}

static void request_batch(sim_trainer *t)
{
    begin_phase(t);
    set_main(t, SIM_MAIN_DATA);
    t->taken++;
    sim_loader_next(t->cfg.loader, t->id, EV_BATCH);
}

static void start_step(sim_trainer *t)
{
    t->step_start_ns = sim_engine_now(t->e);
    t->pc = 0;
    if (*t->observed)
        sim_engine_observe(
            t->e,
            &(sim_observation){.kind = SIM_OBS_STEP, .rank = t->cfg.index, .a = global_step(t)});
    request_batch(t);
}

static void end_of_ops(sim_trainer *t)
{
    set_main(t, SIM_MAIN_OTHER);
    cpu_job(t, t->cfg.program->step_overhead_ns, EV_STEP_TAIL);
}

/* Replayed by a graph: not a sync, a D2H copy the CPU waits for, or the next micro-batch's
 * batch (each micro-batch is its own graph launch, see graph_launched). */
static bool captured(const sim_trainer *t, const sim_op *op)
{
    return t->cfg.cuda_graphs && op->kind != SIM_OP_SYNC && op->kind != SIM_OP_MEMCPY_D2H &&
           op->kind != SIM_OP_NEXT_BATCH;
}

static void next_op(sim_trainer *t)
{
    const sim_program *p = t->cfg.program;
    while (t->pc < p->n_ops && captured(t, &p->ops[t->pc]))
        t->pc++; /* replayed by the graph, not by Python */
    if (t->pc == p->n_ops) {
        end_of_ops(t);
        return;
    }
    const sim_op *op = &p->ops[t->pc];
    if (op->kind == SIM_OP_NEXT_BATCH) {
        if (t->taken == sim_loader_batches(t->cfg.loader))
            end_of_ops(t); /* the epoch ran out of batches inside an accumulation */
        else {
            t->at_next_batch = true;
            request_batch(t);
        }
        return;
    }
    if (op->kind == SIM_OP_SYNC) {
        wait_gpu(t, sim_gpu_enqueued(t->cfg.gpu), EV_OP_WAITED);
        return;
    }
    set_main(t, SIM_MAIN_DISPATCH);
    cpu_job(t, op->dispatch_ns, EV_OP_DISPATCHED);
}

/* Queues op's kernel or all-reduce on its stream (see sim_op.comm); returns its seq. */
static uint64_t queue_gpu(sim_gpu *g, const sim_op *op)
{
    if (op->kind == SIM_OP_ALLREDUCE)
        return op->comm ? sim_gpu_allreduce_overlapped(g, op->bytes)
                        : sim_gpu_allreduce(g, op->bytes);
    return op->comm ? sim_gpu_kernel_after_comm(g, op->gpu_ns, op->sm_fraction)
                    : sim_gpu_kernel(g, op->gpu_ns, op->sm_fraction);
}

static void launch(sim_trainer *t, const sim_op *op)
{
    uint64_t seq = queue_gpu(t->cfg.gpu, op);
    report_item(t, seq, (int)t->pc, SIM_OP_KERNEL, op->unit);
    t->pc++;
    next_op(t);
}

static void op_dispatched(sim_trainer *t)
{
    const sim_op *op = &t->cfg.program->ops[t->pc];
    sim_gpu *g = t->cfg.gpu;
    phase_done(t, SIM_TL_DISPATCH, (int64_t)t->pc, op->kind);
    if (op->kind == SIM_OP_KERNEL) report_launch(t, sim_gpu_enqueued(g) + 1);
    switch ((sim_op_kind)op->kind) {
    case SIM_OP_KERNEL:
        if (sim_gpu_queued(g) >= (uint64_t)sim_gpu_queue_depth(g)) {
            wait_gpu(t, sim_gpu_enqueued(g) - (uint64_t)sim_gpu_queue_depth(g) + 1, EV_ROOM);
            return;
        }
        launch(t, op);
        return;
    case SIM_OP_MEMCPY_H2D: {
        uint64_t seq = sim_gpu_copy(g, op->bytes, op->pinned);
        report_item(t, seq, (int)t->pc, SIM_OP_MEMCPY_H2D, 0);
        if (!op->pinned) {
            set_main(t, SIM_MAIN_H2D);
            begin_phase(t);
            sim_gpu_notify(g, seq, t->id, EV_OP_WAITED);
            return;
        }
        break;
    }
    case SIM_OP_MEMCPY_D2H: {
        uint64_t seq = sim_gpu_copy_d2h(g, op->bytes);
        report_item(t, seq, (int)t->pc, SIM_OP_MEMCPY_D2H, 0);
        wait_gpu(t, seq, EV_OP_WAITED);
        return;
    }
    case SIM_OP_ALLREDUCE: {
        uint64_t seq = queue_gpu(g, op);
        report_item(t, seq, (int)t->pc, SIM_OP_ALLREDUCE, 0);
        break;
    }
    case SIM_OP_CPU:
    case SIM_OP_SYNC:
    case SIM_OP_NEXT_BATCH:
        break;
    }
    t->pc++;
    next_op(t);
}

/* One graph holds the ops from pc up to the next batch (one micro-batch under accumulation). */
static void graph_launched(sim_trainer *t)
{
    const sim_program *p = t->cfg.program;
    phase_done(t, SIM_TL_GRAPH_LAUNCH, 0, 0);
    for (size_t i = t->pc; i < p->n_ops && p->ops[i].kind != SIM_OP_NEXT_BATCH; i++) {
        const sim_op *op = &p->ops[i];
        uint64_t seq = 0;
        if (op->kind == SIM_OP_KERNEL || op->kind == SIM_OP_ALLREDUCE)
            seq = queue_gpu(t->cfg.gpu, op);
        else if (op->kind == SIM_OP_MEMCPY_H2D)
            seq = sim_gpu_copy(t->cfg.gpu, op->bytes, true);
        if (seq) {
            report_item(t, seq, (int)i, (sim_op_kind)op->kind, op->unit);
            if (op->kind == SIM_OP_KERNEL) report_launch(t, seq);
        }
    }
    next_op(t);
}

/* The batch is on its way to the GPU: run the step's ops from the start, or after the
 * NEXT_BATCH op that asked for it. */
static void run_ops(sim_trainer *t)
{
    if (t->at_next_batch) {
        t->at_next_batch = false;
        t->pc++;
    }
    if (t->cfg.cuda_graphs) {
        set_main(t, SIM_MAIN_DISPATCH);
        cpu_job(t, t->cfg.program->graph_launch_ns, EV_GRAPH_LAUNCHED);
    } else {
        next_op(t);
    }
}

static void begin_epoch(sim_trainer *t)
{
    t->step = 0;
    t->taken = 0;
    t->batches = sim_loader_batches(t->cfg.loader);
    sim_loader_begin_epoch(t->cfg.loader, t->epoch);
    start_step(t);
}

static void step_end(sim_trainer *t)
{
    /* Told first: the run may cut the epoch here (sampled mode), making this step its last. */
    if (t->cfg.on_step_end)
        t->cfg.on_step_end(t->cfg.ctx, t->cfg.index, sim_engine_now(t->e) - t->step_start_ns);
    bool last = t->taken == sim_loader_batches(t->cfg.loader);
    if (!last) /* the epoch's last step ends at its sync */
        report(t, SIM_TL_STEP, t->step_start_ns, global_step(t), 0);
    t->step++;
    if (last) {
        wait_gpu(t, sim_gpu_enqueued(t->cfg.gpu), EV_EPOCH_SYNCED);
        return;
    }
    sim_metrics_step(t->cfg.metrics, t->cfg.index, sim_engine_now(t->e) - t->step_start_ns);
    start_step(t);
}

/* The batch is ready: x.to("cuda") costs its dispatch on the main thread. */
static void batch_ready(sim_trainer *t, int64_t batch)
{
    phase_done(t, SIM_TL_DATA_WAIT, global_step(t), 0);
    t->batch = batch;
    set_main(t, SIM_MAIN_DISPATCH);
    cpu_job(t, t->cfg.copy_dispatch_ref_ns, EV_COPY_ISSUED);
}

static void copy_issued(sim_trainer *t)
{
    double bytes = (double)sim_loader_batch_samples(t->cfg.loader, t->batch) * t->cfg.input_bytes;
    uint64_t seq = sim_gpu_copy(t->cfg.gpu, bytes, t->cfg.pin_memory);
    phase_done(t, SIM_TL_COPY_ISSUE, 0, 0);
    report_item(t, seq, -1, SIM_OP_MEMCPY_H2D, 0);
    if (t->cfg.pin_memory && t->cfg.non_blocking) {
        run_ops(t);
        return;
    }
    set_main(t, SIM_MAIN_H2D);
    begin_phase(t);
    sim_gpu_notify(t->cfg.gpu, seq, t->id, EV_COPY_DONE);
}

static void step_tail_done(sim_trainer *t)
{
    phase_done(t, SIM_TL_STEP_TAIL, 0, 0);
    if (t->cfg.sync_every_step)
        wait_gpu(t, sim_gpu_enqueued(t->cfg.gpu), EV_STEP_SYNCED);
    else
        step_end(t);
}

/* The GPU has drained at the epoch's end: its last step is over. */
static void epoch_synced(sim_trainer *t)
{
    phase_done(t, SIM_TL_SYNC, -1, -1);
    report(t, SIM_TL_STEP, t->step_start_ns, global_step(t) - 1, 0); /* step was counted on */
    sim_metrics_step(t->cfg.metrics, t->cfg.index, sim_engine_now(t->e) - t->step_start_ns);
    set_main(t, SIM_MAIN_OTHER);
    if (t->cfg.on_epoch_end) t->cfg.on_epoch_end(t->cfg.ctx, t->cfg.index, t->epoch);
    if (++t->epoch < t->cfg.epochs)
        begin_epoch(t);
    else
        t->done = true;
}

static void handle(sim_engine *e, void *self, const sim_event *ev)
{
    (void)e;
    sim_trainer *t = self;
    switch (ev->kind) {
    case EV_BEGIN_EPOCH:
        begin_epoch(t);
        break;
    case EV_BATCH:
        batch_ready(t, (int64_t)ev->a);
        break;
    case EV_COPY_ISSUED:
        copy_issued(t);
        break;
    case EV_COPY_DONE:
        phase_done(t, SIM_TL_COPY_WAIT, 0, 0);
        run_ops(t);
        break;
    case EV_OP_DISPATCHED:
        op_dispatched(t);
        break;
    case EV_ROOM:
        phase_done(t, SIM_TL_LAUNCH_WAIT, (int64_t)t->pc, 0);
        set_main(t, SIM_MAIN_DISPATCH);
        launch(t, &t->cfg.program->ops[t->pc]);
        break;
    case EV_OP_WAITED:
        phase_done(t, SIM_TL_SYNC, (int64_t)t->pc, t->cfg.program->ops[t->pc].kind);
        t->pc++;
        next_op(t);
        break;
    case EV_GRAPH_LAUNCHED:
        graph_launched(t);
        break;
    case EV_STEP_TAIL:
        step_tail_done(t);
        break;
    case EV_STEP_SYNCED:
        phase_done(t, SIM_TL_SYNC, -1, -1);
        step_end(t);
        break;
    case EV_EPOCH_SYNCED:
        epoch_synced(t);
        break;
    }
}

static const sim_component_ops trainer_ops = {.name = "trainer", .handle = handle};

sim_trainer *sim_trainer_create(sim_engine *e, const sim_trainer_config *cfg)
{
    sim_trainer *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->e = e;
    t->observed = sim_engine_observed(e);
    t->cfg = *cfg;
    int id = sim_engine_add(e, &trainer_ops, t);
    if (id < 0) {
        free(t);
        return NULL;
    }
    t->id = (uint32_t)id;
    return t;
}

void sim_trainer_destroy(sim_trainer *t)
{
    free(t);
}

void sim_trainer_start(sim_trainer *t)
{
    sim_engine_after(t->e, 0, t->id, EV_BEGIN_EPOCH, 0);
}

bool sim_trainer_done(const sim_trainer *t)
{
    return t->done;
}
