"""OTLP export settings from OpenTelemetry's standard variables and config.json (issue 18)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seri.pure.trajectories.otlp_settings import (
    OtlpConfigError,
    OtlpSettings,
    otlp_settings,
    percent_decoded,
    shown_url,
)

SECRET = "Bearer sk-abcdefghijklmnop0123"


def _on(env: dict[str, str], config: object = None) -> OtlpSettings:
    settings = otlp_settings(env, config, "0.1.0")
    assert settings is not None
    return settings


def test_nothing_named_means_no_export() -> None:
    assert otlp_settings({}, None) is None
    assert (
        otlp_settings({"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, None)
        is None
    )


def test_the_general_endpoint_gets_each_signals_path() -> None:
    settings = _on({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"})
    assert settings.traces is not None and settings.metrics is not None
    assert settings.traces.url == "http://collector:4318/v1/traces"
    assert settings.metrics.url == "http://collector:4318/v1/metrics"
    assert settings.traces.protocol == "http/protobuf"
    assert settings.traces.source == "OTEL_EXPORTER_OTLP_ENDPOINT"


def test_a_signal_endpoint_is_used_as_it_is_and_only_for_its_signal() -> None:
    settings = _on({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://api.example.com/otel/traces"})
    assert settings.traces is not None
    assert settings.traces.url == "https://api.example.com/otel/traces"
    assert settings.metrics is None  # never a guessed localhost default


def test_per_signal_variables_win_over_general_ones_and_env_over_config() -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://b:9999/m",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_HEADERS": "a=1",
        "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "b=2",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "2500",
        "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
    }
    config = {"endpoint": "http://config:4318", "protocol": "http/json", "headers": {"c": "3"}}
    settings = _on(env, config)
    assert settings.traces is not None and settings.metrics is not None
    assert settings.traces.url == "http://a:4318/v1/traces"
    assert settings.metrics.url == "http://b:9999/m"
    assert settings.traces.protocol == "http/protobuf"
    assert settings.metrics.protocol == "http/json"
    assert settings.traces.headers == (("a", "1"),)
    assert settings.metrics.headers == (("b", "2"),)
    assert settings.traces.timeout == 2.5
    assert settings.traces.gzip


def test_config_alone_turns_export_on() -> None:
    config = {
        "endpoint": "http://localhost:4318",
        "headers": {"x-api-key": "k"},
        "capture_content": True,
    }
    settings = _on({}, config)
    assert settings.traces is not None
    assert settings.traces.url == "http://localhost:4318/v1/traces"
    assert settings.traces.headers == (("x-api-key", "k"),)
    assert settings.traces.source == "config.json telemetry.otlp.endpoint"
    assert settings.capture_content


def test_exporter_none_and_sdk_disabled_switch_signals_off() -> None:
    base = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318"}
    only_traces = _on({**base, "OTEL_METRICS_EXPORTER": "none"})
    assert only_traces.metrics is None and only_traces.traces is not None
    assert (
        otlp_settings(
            {**base, "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}, None
        )
        is None
    )
    assert otlp_settings({**base, "OTEL_SDK_DISABLED": "true"}, None) is None
    assert _on({**base, "OTEL_TRACES_EXPORTER": "console,otlp"}).traces is not None


def test_headers_are_percent_decoded_and_kept_out_of_repr() -> None:
    settings = _on(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318",
            "OTEL_EXPORTER_OTLP_HEADERS": (
                "Authorization=Bearer%20sk-abcdefghijklmnop0123,x-team=a%2Cb"
            ),
        }
    )
    assert settings.traces is not None
    assert dict(settings.traces.headers) == {"Authorization": SECRET, "x-team": "a,b"}
    assert SECRET not in repr(settings)
    assert SECRET in settings.secrets()


@pytest.mark.parametrize(
    ("env", "words"),
    [
        ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "seri sends OTLP over HTTP only"),
        (
            {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "thrift"},
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL is 'thrift'",
        ),
        (
            {"OTEL_EXPORTER_OTLP_HEADERS": "Authorization"},
            "OTEL_EXPORTER_OTLP_HEADERS: entry 1 is not key=value",
        ),
        (
            {"OTEL_EXPORTER_OTLP_HEADERS": "a=1,Authorization=Bearer%zzsk-abcdefghijklmnop0123"},
            "entry 2 ('Authorization') has a bad %-escape",
        ),
        (
            {"OTEL_EXPORTER_OTLP_HEADERS": "bad name=Bearer%20sk-abcdefghijklmnop0123"},
            "is not a valid header name",
        ),
    ],
)
def test_bad_settings_name_the_setting_never_a_header_value(
    env: dict[str, str], words: str
) -> None:
    with pytest.raises(OtlpConfigError) as caught:
        otlp_settings({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", **env}, None)
    assert words in str(caught.value)
    assert "sk-abcdefghijklmnop0123" not in str(caught.value)


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ("http://a:4318", "telemetry.otlp must be an object"),
        ({"endpoint": "collector:4318"}, "must be an http:// or https:// URL"),
        ({"endpoint": "http://a", "protcol": "http/json"}, "has no key 'protcol'"),
        ({"endpoint": "http://a", "headers": ["x"]}, "headers must be an object of texts"),
        (
            {"endpoint": "http://a", "capture_content": "yes"},
            "capture_content must be true or false",
        ),
    ],
)
def test_bad_config_is_named(config: object, words: str) -> None:
    with pytest.raises(OtlpConfigError, match=words):
        otlp_settings({}, config)


def test_an_endpoint_with_credentials_is_shown_without_them() -> None:
    url = "https://user:pa55word@collector.example:4318/v1/traces?api_key=k3y"
    assert shown_url(url) == "https://collector.example:4318/v1/traces"
    with pytest.raises(OtlpConfigError) as caught:
        otlp_settings({"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://user:pa55word@x/?k=k3y"}, None)
    assert "pa55word" not in str(caught.value) and "k3y" not in str(caught.value)


def test_resource_attributes_and_service_name() -> None:
    base = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318"}
    plain = dict(_on(base).resource)
    assert plain["service.name"] == "seri"
    assert plain["service.version"] == "0.1.0"
    given = dict(
        _on(
            {
                **base,
                "OTEL_RESOURCE_ATTRIBUTES": (
                    "service.name=ci,deployment.environment=prod%20eu,team=x"
                ),
            }
        ).resource
    )
    assert given["service.name"] == "ci"
    assert given["deployment.environment"] == "prod eu"
    named = dict(
        _on(
            {**base, "OTEL_SERVICE_NAME": "fleet", "OTEL_RESOURCE_ATTRIBUTES": "service.name=ci"}
        ).resource
    )
    assert named["service.name"] == "fleet"
    broken = _on({**base, "OTEL_RESOURCE_ATTRIBUTES": "a=1,oops"})
    assert dict(broken.resource)["service.name"] == "seri"
    assert "a" not in dict(broken.resource)
    assert any("OTEL_RESOURCE_ATTRIBUTES is ignored" in line for line in broken.warnings)


@pytest.mark.parametrize(
    ("value", "captured"),
    [
        ("true", True),
        ("TRUE", True),
        ("SPAN_ONLY", True),
        ("span_and_event", True),
        ("false", False),
        ("NO_CONTENT", False),
        ("EVENT_ONLY", False),
    ],
)
def test_the_content_opt_in(value: str, captured: bool) -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": value,
    }
    assert _on(env, {"capture_content": not captured}).capture_content is captured


def test_content_is_off_by_default() -> None:
    assert not _on({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318"}).capture_content


def test_a_bad_timeout_is_a_warning_not_an_error() -> None:
    settings = _on(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}
    )
    assert settings.traces is not None and settings.traces.timeout == 10.0
    assert any("OTEL_EXPORTER_OTLP_TIMEOUT" in line for line in settings.warnings)


@given(st.text(max_size=30))
def test_percent_encoding_round_trips(text: str) -> None:
    encoded = "".join(f"%{byte:02X}" for byte in text.encode("utf-8"))
    assert percent_decoded(encoded) == text
