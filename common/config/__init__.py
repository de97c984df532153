"""Launch configuration: options from the command line, the environment and ``config.toml``.

``load_config`` is the only entry point that reads them; everything else receives a ``Config``.
"""

from common.config.cli import SUBCOMMANDS
from common.config.loader import load_config
from common.config.model import Config, ConfigError, LoadedConfig

__all__ = ["SUBCOMMANDS", "Config", "ConfigError", "LoadedConfig", "load_config"]
