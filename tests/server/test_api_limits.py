"""Numbers the API reads from a query string stay within what the databases hold: an offset or a
page number past 2**53 - 1 is a 422 naming the parameter (0.2.0 passed 2**63 to the driver: an OverflowError and a
500), and the largest accepted offset is an empty page, not an error."""

from __future__ import annotations

import pytest

from .conftest import new_set

HUGE = [2**53, 2**63, 2**64 + 1, 10**30]


@pytest.mark.parametrize("path", ["/api/v1/evaluations?offset={n}", "/api/v1/question-sets?offset={n}",
                                  "/api/v1/evaluations/EVAL?offset={n}", "/evaluations/list?page={n}",
                                  "/evaluations/question-sets?page={n}", "/evaluations/EVAL?page={n}"])
@pytest.mark.parametrize("n", HUGE)
def test_an_offset_or_page_past_the_largest_is_a_422(client_on, sqlite_url, path, n):
    client = client_on(sqlite_url)
    response = client.get(path.format(n=n).replace("EVAL", "e-none"))
    assert response.status_code == 422, response.text
    parameter = "page" if "page=" in path else "offset"
    assert response.json()["detail"][0]["loc"] == ["query", parameter]


@pytest.mark.parametrize("value", ["-1", "abc", "1.5", ""])
def test_an_offset_that_is_not_a_count_is_a_422(client_on, sqlite_url, value):
    assert client_on(sqlite_url).get(f"/api/v1/evaluations?offset={value}").status_code == 422


def test_the_largest_offset_and_page_are_an_empty_page(client_on, sqlite_url):
    from .conftest import Api

    api = Api(client_on(sqlite_url))
    new_set(api, 2)
    largest = 2**53 - 1
    page = api.get(f"/api/v1/question-sets?offset={largest}")
    assert page["items"] == [] and page["total"] == 1 and page["offset"] == largest
    assert api.client.get(f"/evaluations/question-sets?page={largest // 50}").status_code == 200
