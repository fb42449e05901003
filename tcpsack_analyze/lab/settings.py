"""The TCP settings of a lab run: what is written to each namespace, and what is read back.

All of these sysctls are per network namespace on Linux, so setting them in the lab's
namespaces changes nothing on the host. SACK, D-SACK and timestamps are negotiated, so they
are applied on both ends; the loss-recovery knobs matter only at the sender but are applied on
both ends too, so a capture's two directions come from the same stack configuration.

- ``tcp_sack`` (RFC 2018), ``tcp_dsack`` (RFC 2883), ``tcp_timestamps`` (RFC 7323);
- ``tcp_recovery``: bit 0 enables RACK loss detection (RFC 8985), 0 falls back to dupACK
  counting (RFC 6675 / RFC 5681);
- ``tcp_early_retrans``: 3 or 4 enable the tail loss probe (RFC 8985 section 7), 0 disables it;
- ``tcp_thin_linear_timeouts``: linear RTO backoff while a stream is thin (Petlund's thin-stream
  modifications, the thesis 001);
- ``tcp_congestion_control``: the namespace default. A fresh namespace can refuse a module-backed
  default, so the sender also sets its algorithm per socket (TCP_CONGESTION), which is the value
  that counts; the traffic program records what the socket reports.
- ``tcp_no_metrics_save`` = 1, so one flow's cached ssthresh/RTT never seeds the next.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from tcpsack_analyze.lab.topology import LabError, ns_cmd, run

__all__ = ["CONGESTION_CONTROLS", "READ_BACK", "TcpSettings", "check_applied", "read_back"]

READ_BACK = (
    "net.ipv4.tcp_sack", "net.ipv4.tcp_dsack", "net.ipv4.tcp_timestamps", "net.ipv4.tcp_recovery",
    "net.ipv4.tcp_early_retrans", "net.ipv4.tcp_thin_linear_timeouts",
    "net.ipv4.tcp_congestion_control", "net.ipv4.tcp_available_congestion_control",
    "net.ipv4.tcp_no_metrics_save", "net.ipv4.tcp_frto", "net.ipv4.tcp_ecn",
    "net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_mtu_probing", "net.ipv4.tcp_reordering",
    "net.ipv4.tcp_min_rtt_wlen", "net.ipv4.tcp_wmem", "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_comp_sack_nr", "net.ipv4.tcp_autocorking",
)
"""Sysctls recorded in ``truth.json`` for each end, whether the run set them or not."""

CONGESTION_CONTROLS = ("reno", "cubic", "bbr")


@dataclass(frozen=True)
class TcpSettings:
    """Per-run TCP configuration (defaults are Linux's own)."""

    cc: str = "cubic"
    sack: bool = True
    dsack: bool = True
    rack: bool = True
    tlp: bool = True
    timestamps: bool = True
    thin_linear_timeouts: bool = False

    def __post_init__(self) -> None:
        if self.cc not in CONGESTION_CONTROLS:
            raise ValueError(f"congestion control must be one of {CONGESTION_CONTROLS}, not {self.cc!r}")

    def sysctls(self) -> dict[str, str]:
        """The values written to both namespaces (except the congestion control default)."""
        return {
            "net.ipv4.tcp_sack": str(int(self.sack)),
            "net.ipv4.tcp_dsack": str(int(self.dsack)),
            "net.ipv4.tcp_timestamps": str(int(self.timestamps)),
            "net.ipv4.tcp_recovery": str(int(self.rack)),
            "net.ipv4.tcp_early_retrans": "3" if self.tlp else "0",
            "net.ipv4.tcp_thin_linear_timeouts": str(int(self.thin_linear_timeouts)),
            "net.ipv4.tcp_no_metrics_save": "1",
        }

    def apply(self, namespace: str) -> None:
        """Write the settings into ``namespace``; try the congestion control default too."""
        run(ns_cmd(namespace, "sysctl", "-qw", *(f"{k}={v}" for k, v in self.sysctls().items())))
        try:
            run(ns_cmd(namespace, "sysctl", "-qw", f"net.ipv4.tcp_congestion_control={self.cc}"))
        except LabError:
            pass  # the socket option in the traffic program sets it per flow regardless

    def to_dict(self) -> dict[str, object]:
        """For ``truth.json``."""
        return asdict(self)


def read_back(namespace: str) -> dict[str, str]:
    """The current values of :data:`READ_BACK` in ``namespace``, whitespace normalised."""
    out = run(ns_cmd(namespace, "sysctl", *READ_BACK))
    values: dict[str, str] = {}
    for line in out.splitlines():
        key, _, value = line.partition("=")
        values[key.strip()] = " ".join(value.split())
    return values


def check_applied(settings: TcpSettings, values: dict[str, str], where: str) -> None:
    """Raise if the namespace does not hold what :meth:`TcpSettings.apply` wrote."""
    wrong = {k: (v, values.get(k)) for k, v in settings.sysctls().items() if values.get(k) != v}
    if wrong:
        raise LabError(f"{where}: sysctls did not take: {wrong}")
