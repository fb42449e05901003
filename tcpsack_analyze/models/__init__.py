"""Reference sender models (DOMAIN.md section 8): sans-I/O congestion-control state machines.

Every model subclasses :class:`SenderModel` and registers by name (:data:`MODELS`):
``tahoe``, ``reno`` (RFC 5681), ``newreno`` (RFC 6582), ``sack`` (RFC 6675, classic or PRR
reduction, RFC 6937), ``ksack`` (paper 004) and ``cubic`` (RFC 8312). :class:`SenderOptions`
holds what they share; :func:`model_class` turns a name (or a user's own subclass) into a class.
See docs/models.md.
"""
from tcpsack_analyze.models import cubic, ksack, newreno, reno, sack, tahoe  # noqa: F401 - register
from tcpsack_analyze.models.base import (
    INFINITE,
    MODELS,
    SenderModel,
    SenderOptions,
    State,
    model_class,
    register,
)

__all__ = ["INFINITE", "MODELS", "SenderModel", "SenderOptions", "State", "model_class", "register"]
