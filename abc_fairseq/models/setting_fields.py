"""Strategy settings as fields of the dataclass models' configs (``abc_lm``), one per setting, also
for a setting registered after the model (a strategy from the user's ``--user-dir`` module): its
flag, its key in hydra's config and its value in checkpoints then work as a built-in one's."""

import dataclasses
from typing import List, Optional, Tuple

from hydra.core.config_store import ConfigStore

from ..strategies import Setting, all_settings
from ..strategies.registry import on_new_settings

_CONFIGS: List[type] = []  # every config ``with_setting_fields`` made, extended by later settings


def _field(setting: Setting) -> Tuple[type, dataclasses.Field]:
    """The type and the ``dataclasses.field`` of ``setting``'s config field."""
    kind = Optional[setting.kind] if setting.default is None else setting.kind
    return kind, dataclasses.field(default=setting.default, metadata={"help": setting.help})


def with_setting_fields(name: str, base: type) -> type:
    """``base`` (a model's config dataclass) extended with one field per strategy setting, so that a
    new strategy's setting needs no change to any model; settings registered later are added to it."""
    config = dataclasses.make_dataclass(name, [(s.key, *_field(s)) for s in all_settings()], bases=(base,))
    config.__module__ = base.__module__
    _CONFIGS.append(config)
    return config


def _add_field(config: type, setting: Setting) -> None:
    """``setting``'s field added to ``config`` in place, so that fairseq's registries, the model class
    and every import of the config see it (``__init__`` leaves it at the class default)."""
    kind, spec = _field(setting)
    config.__dataclass_fields__[setting.key] = \
        dataclasses.make_dataclass("One", [(setting.key, kind, spec)]).__dataclass_fields__[setting.key]
    config.__annotations__[setting.key] = kind
    setattr(config, setting.key, setting.default)


def _store_again(config: type) -> None:
    """fairseq stored an instance of the config in hydra's ConfigStore when the model registered
    (converted there and then): store the extended one under the same names."""
    from fairseq.models import MODEL_DATACLASS_REGISTRY

    for name, registered in list(MODEL_DATACLASS_REGISTRY.items()):
        if registered is config:
            node = config()
            node._name = name
            ConfigStore.instance().store(name=name, group="model", node=node, provider="fairseq")


def _add_settings(settings: Tuple[Setting, ...]) -> None:
    """Every config made so far extended with ``settings`` (new to the registry); ValueError, before
    anything changes, when one would take the name of a model option."""
    for config in _CONFIGS:
        taken = [setting.flag for setting in settings if setting.key in config.__dataclass_fields__]
        if taken:
            raise ValueError(f"strategy settings {', '.join(taken)} would take the place of {config.__name__}'s "
                             f"options of the same names: rename them")
    for config in _CONFIGS:
        for setting in settings:
            _add_field(config, setting)
        _store_again(config)


on_new_settings(_add_settings)
