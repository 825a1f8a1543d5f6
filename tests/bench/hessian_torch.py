#!/usr/bin/env python3
"""The LFH Hutchinson estimator of `quantscope-cli hessian --mode activation --granularity
per-tensor --op-type Conv` written in PyTorch, for the benchmark: forward hooks keep every Conv
output, then per iteration one torch.autograd.grad over all of them with Rademacher grad_outputs
(retain_graph), squared and summed per sample, running mean. Prints the seconds of the whole run
(forward + iterations) as JSON.

usage: hessian_torch.py MODEL_NAME SAMPLES BATCH ITERATIONS THREADS
"""
import json
import sys
import time

import torch
import torchvision


def main():
    name, samples, batch, iterations, threads = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                                                 int(sys.argv[4]), int(sys.argv[5]))
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    outputs = []
    for module in model.modules():
        if isinstance(module, torch.nn.Conv2d):
            module.register_forward_hook(lambda _m, _i, out: outputs.append(out))
    data = torch.randn(samples, 3, 224, 224)
    start = time.perf_counter()
    traces = []
    for b0 in range(0, samples, batch):
        outputs.clear()
        x = data[b0:b0 + batch].requires_grad_(False)
        y = model(x)
        means = [torch.zeros(x.shape[0]) for _ in outputs]
        for it in range(iterations):
            v = torch.randint(0, 2, y.shape, dtype=torch.float32) * 2 - 1
            grads = torch.autograd.grad(y, outputs, grad_outputs=v, retain_graph=True)
            for t, g in enumerate(grads):
                score = g.pow(2).flatten(1).sum(1)
                means[t] += (score - means[t]) / (it + 1)
        traces.append(torch.stack(means))
    seconds = time.perf_counter() - start
    print(json.dumps({"torch_seconds": seconds, "targets": len(outputs),
                      "torch_threads": threads}))


if __name__ == "__main__":
    main()
