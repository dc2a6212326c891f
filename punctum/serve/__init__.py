"""`punctum serve`: an HTTP API and a web page over loaded models (extra `serve`).

    punctum serve                      # 127.0.0.1:8000, the bundled model
    punctum serve --config serve.toml  # limits and models from a [serve] table

    from punctum.serve import create_app, ServeConfig
    app = create_app(ServeConfig(models=("en-tiny",)))
"""

from punctum.serve.config import ServeConfig, load_config


def create_app(config: ServeConfig | None = None, punctuators=None):
    """The FastAPI app (imported lazily so that the config works without FastAPI)."""
    from punctum.serve.app import create_app as _create_app

    return _create_app(config, punctuators)


def run(config: ServeConfig) -> None:
    """Load the models, then serve with uvicorn until interrupted."""
    try:
        import fastapi  # noqa: F401
        import uvicorn
    except ImportError as error:
        raise ImportError(f"serve needs the serve extra: pip install 'punctum[serve]' "
                          f"({error})") from None
    app = create_app(config)
    uvicorn.run(app, host=config.host, port=config.port, log_level="info")


__all__ = ["ServeConfig", "create_app", "load_config", "run"]
