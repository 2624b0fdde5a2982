// graph_compute of the CUDA backend: checks the graph, then runs its nodes one by one ("plain"),
// or captures their launches into a CUDA graph, or replays a graph captured before
// (graph-cache.h has the key and the policy).
//
// Data errors (ggml_cuda_op_checks_data) are reported through a device flag that the graph
// copies back at its end; graph_compute then waits for the stream, so graphs with such ops
// (every decode graph writes its KV rows with SET_ROWS) return only when their work is done.
// Other graphs return as soon as their work is queued.
#include "backend-cuda.h"
#include "ops.cuh"

#include <cstdio>

namespace {

bool node_computes(const ggml_tensor * t) { return !ggml_op_is_metadata(t->op) && ggml_nelements(t) > 0; }

}  // namespace

// Every computed node and each of its sources must live in this device's buffers (a kernel
// reading a host or foreign address would fault and poison the context), and be supported.
ggml_status ggml_cuda_backend::check_graph(const ggml_cgraph * gf, bool & checks_data, int & n_compute) const {
    checks_data = false;
    n_compute = 0;
    for (int i = 0; i < gf->n_nodes; ++i) {
        const ggml_tensor * node = gf->nodes[i];
        if (!node_computes(node)) continue;
        ++n_compute;
        if (!node->data || !owns(node)) {
            std::fprintf(stderr, "inferd: %s: node %d (%s, %s) is not in this device's memory\n", name(), i,
                         ggml_op_name(node->op), ggml_get_name(node));
            return GGML_STATUS_FAILED;
        }
        for (const ggml_tensor * s : node->src) {
            if (!s || ggml_nelements(s) == 0) continue;
            if (!s->data || !owns(s)) {
                std::fprintf(stderr, "inferd: %s: source %s of node %d (%s) is not in this device's memory\n", name(),
                             ggml_get_name(s), i, ggml_op_name(node->op));
                return GGML_STATUS_FAILED;
            }
        }
        if (!ggml_cuda_supports_op(node)) {
            std::fprintf(stderr, "inferd: %s: node %d (%s, %s) is not supported\n", name(), i, ggml_op_name(node->op),
                         ggml_type_name(node->type));
            return GGML_STATUS_FAILED;
        }
        checks_data = checks_data || ggml_cuda_op_checks_data(node);
    }
    return GGML_STATUS_SUCCESS;
}

// Queues every node (and, when the graph checks data, the copy of the error flag to the host).
// False when a call failed.
bool ggml_cuda_backend::run_nodes(ggml_cgraph * gf, bool checks_data) {
    for (int i = 0; i < gf->n_nodes && !ctx_.failed; ++i) {
        ggml_tensor * node = gf->nodes[i];
        if (!node_computes(node)) continue;
        if (!ggml_cuda_compute_forward(ctx_, node)) ctx_.failed = true;
        if (!GGML_CUDA_CHECK(cudaGetLastError())) ctx_.failed = true;
        if (ctx_.failed && !ctx_.capturing) {
            std::fprintf(stderr, "inferd: %s: node %d (%s, %s) failed\n", name(), i, ggml_op_name(node->op),
                         ggml_get_name(node));
        }
    }
    if (checks_data && !ctx_.failed) {
        GGML_CUDA_CHECK(cudaMemcpyAsync(host_error_flag_, ctx_.error_flag, sizeof(int), cudaMemcpyDeviceToHost,
                                        ctx_.stream));
    }
    return !ctx_.failed;
}

// Captures the graph's launches, keeps the instantiated graph in the cache and launches it.
// False (nothing queued, the key marked uncapturable) when any step fails: the caller then runs
// the graph plain.
bool ggml_cuda_backend::capture_and_launch(ggml_cgraph * gf, const ggml_cuda_graph_key & key, bool checks_data) {
    ctx_.failed = false;
    ctx_.capturing = true;
    bool ok = GGML_CUDA_CHECK(cudaStreamBeginCapture(ctx_.stream, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    if (ok) {
        run_nodes(gf, checks_data);
        const cudaError_t end = cudaStreamEndCapture(ctx_.stream, &graph);
        ok = end == cudaSuccess && graph != nullptr && !ctx_.failed;
    }
    ctx_.capturing = false;
    cudaGraphExec_t exec = nullptr;
    if (ok) ok = GGML_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    if (graph) GGML_CUDA_CHECK(cudaGraphDestroy(graph));
    (void) cudaGetLastError();  // errors of a dropped capture are not the plain run's
    ctx_.failed = false;
    if (!ok) {
        graphs_->mark_uncapturable(key);
        std::fprintf(stderr, "inferd: %s: a graph of %d nodes cannot be captured into a CUDA graph; it runs "
                             "without one\n", name(), gf->n_nodes);
        return false;
    }
    graphs_->store(key, exec);
    if (!GGML_CUDA_CHECK(cudaGraphLaunch(exec, ctx_.stream))) {
        ctx_.failed = false;
        graphs_->mark_uncapturable(key);  // destroys exec
        return false;
    }
    ++n_captured_;
    return true;
}

// After the graph is queued: when it checks data, waits for it and reads the error flag.
ggml_status ggml_cuda_backend::finish(bool checks_data) {
    if (ctx_.failed) return GGML_STATUS_FAILED;
    if (!checks_data) return GGML_STATUS_SUCCESS;
    if (!GGML_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream))) return GGML_STATUS_FAILED;
    if (*host_error_flag_ == 0) return GGML_STATUS_SUCCESS;
    // A data error (index out of range): reset the flag for the next graph.
    *host_error_flag_ = 0;
    GGML_CUDA_CHECK(cudaMemsetAsync(ctx_.error_flag, 0, sizeof(int), ctx_.stream));
    GGML_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
    return GGML_STATUS_FAILED;
}

ggml_status ggml_cuda_backend::graph_compute(ggml_cgraph * gf) {
    ggml_cuda_context_scope scope(ctx_);
    ctx_.failed = false;
    if (!ggml_cuda_set_device(ctx_.device)) return GGML_STATUS_FAILED;
    bool checks_data = false;
    int n_compute = 0;
    const ggml_status st = check_graph(gf, checks_data, n_compute);
    if (st != GGML_STATUS_SUCCESS) return st;
    if (n_compute == 0) return GGML_STATUS_SUCCESS;

    if (graphs_->enabled()) {
        if (ctx_.scratch_generation != graphs_generation_) {
            graphs_->clear();  // captured graphs hold scratch addresses that were freed
            graphs_generation_ = ctx_.scratch_generation;
        }
        const ggml_cuda_graph_key key = ggml_cuda_graph_key_of(gf);
        const ggml_cuda_graph_cache::lookup_result r = graphs_->lookup(key);
        if (r.what == ggml_cuda_graph_action::replay) {
            if (GGML_CUDA_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(r.handle), ctx_.stream))) {
                ++n_replayed_;
                return finish(checks_data);
            }
            ctx_.failed = false;
            graphs_->erase(key);
        } else if (r.what == ggml_cuda_graph_action::capture && capture_and_launch(gf, key, checks_data)) {
            return finish(checks_data);
        }
    }
    run_nodes(gf, checks_data);
    return finish(checks_data);
}
