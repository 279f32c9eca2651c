"""The benchmarks' CPU memory probe (peak bytes held in tensors, deterministic) and when it runs."""

import torch

from benchmarks.report import MIB
from benchmarks.worker import CudaPeakProbe, TensorPeakProbe, peak_live_bytes, peak_probe


def test_probe_reports_the_peak_of_live_tensors_not_the_sum_of_allocations():
    kept = torch.ones(2 * MIB // 4)  # alive before start: not counted
    probe = peak_probe(torch.device("cpu"), profile_cpu=True)
    assert isinstance(probe, TensorPeakProbe)
    probe.start()
    first = torch.ones(8 * MIB // 4)  # 8 MiB
    second = torch.ones(4 * MIB // 4)  # 12 MiB live
    del first, second
    third = torch.ones(6 * MIB // 4)  # 6 MiB live
    del third, kept  # freeing a tensor from before the start lowers the running sum
    peak = probe.stop()
    assert 12 * MIB <= peak < 12 * MIB + 64 * 1024, peak / MIB


def test_probe_is_the_same_across_repeats_of_the_same_work():
    def work():
        x = torch.randn(256, 512)
        return (x @ x.T).softmax(-1).sum()

    peaks = []
    for _ in range(3):
        probe = TensorPeakProbe()
        probe.start()
        work()
        peaks.append(probe.stop())
    assert peaks[0] > 0 and len(set(peaks)) == 1, peaks


class _Event:
    def __init__(self, t, nbytes, name="[memory]", device="DeviceType.CPU"):
        self.t, self.n, self._name, self.device = t, nbytes, name, device

    def start_ns(self):
        return self.t

    def nbytes(self):
        return self.n

    def name(self):
        return self._name

    def device_type(self):
        return self.device


def test_replay_orders_events_by_time_and_ignores_other_devices_and_ops():
    events = [_Event(30, -100), _Event(10, 100), _Event(20, 50), _Event(25, 999, device="DeviceType.CUDA"),
              _Event(26, 999, name="aten::mm"), _Event(40, 70)]
    assert peak_live_bytes(events) == 150
    assert peak_live_bytes([_Event(1, -10)]) == 0


def test_cpu_is_probed_only_where_asked_cuda_always():
    assert isinstance(peak_probe(torch.device("cpu"), profile_cpu=True), TensorPeakProbe)
    assert peak_probe(torch.device("cpu"), profile_cpu=False) is None
    assert isinstance(peak_probe(torch.device("cuda"), profile_cpu=False), CudaPeakProbe)  # free of overhead
