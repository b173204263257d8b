"""Every registered env passes Gymnasium's checker and a gateway round-trip."""

import pytest

from palaestra import registry
from palaestra.conformance import check_env_local, check_env_remote

ENV_IDS = list(registry.specs())


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gymnasium_checker(env_id):
    check_env_local(env_id)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gateway_round_trip(env_id, gateway):
    check_env_remote(env_id, base_url=gateway)
