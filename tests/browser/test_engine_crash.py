"""WebKit deletes the session of a page it lost to a crash or hang of its web
process (ENGINE_CRASH). The harness renews the session in place and reruns that
one test once; these tests hold both parts to it."""

from __future__ import annotations

from typing import Any

import pytest
from selenium.common.exceptions import InvalidSessionIdException
from selenium.webdriver.remote.command import Command

from .browser_harness import (
    ENGINE_CRASH,
    engine_missing,
    make_driver,
    renew_lost_webkit_session,
    selected_engines,
)

pytestmark = pytest.mark.browser


@pytest.mark.engines
def test_a_webkit_test_reruns_only_on_a_lost_page(request: Any, engine: str) -> None:
    marker = request.node.get_closest_marker("flaky")
    if engine == "webkit":
        assert marker is not None
        assert marker.kwargs == {"reruns": 1, "only_rerun": [ENGINE_CRASH]}
    else:
        assert marker is None


def test_a_deleted_webkit_session_is_renewed_in_place(runtime_ready: None) -> None:
    if "webkit" not in selected_engines():
        pytest.skip("STREAMPACE_ENGINES leaves WebKit out")
    missing = engine_missing("webkit")
    if missing:
        pytest.fail(missing)
    driver = make_driver("webkit")
    try:
        driver.get("about:blank")
        assert renew_lost_webkit_session(driver) is False  # a live session is kept
        old = driver.session_id
        driver.execute(Command.QUIT)  # what WebKit does to the session of a lost page
        with pytest.raises(InvalidSessionIdException):
            driver.execute_script("return 1")
        assert renew_lost_webkit_session(driver) is True
        assert driver.session_id != old
        driver.get("about:blank")
        assert driver.execute_script("return 6 * 7") == 42
        assert driver.get_window_size() == {"width": 1200, "height": 900}
    finally:
        driver.quit()
