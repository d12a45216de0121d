"""A Chinese page says the server's refusals in Chinese (the error page); the API keeps `detail` in English and adds `message`."""

from __future__ import annotations

from ragretrieval.server.server_messages import server_message

from .conftest import new_set


def test_known_refusals_are_translated_with_their_values_and_others_stay():
    assert server_message("zh", "no evaluation 'eval_x'") == "没有评测 'eval_x'"
    assert server_message("zh", "evaluation 'k3' has no stored run to compare (it is FAILED); compare completed "
                                "evaluations") == "评测 'k3' 没有可对比的已存储运行（状态为 FAILED）；只能对比已完成的评测"
    assert server_message("zh", "ids: compare takes 2 or 3 evaluations separated by commas; got 1").endswith("收到 1 个")
    assert server_message("en", "no evaluation 'eval_x'") == "no evaluation 'eval_x'"
    assert server_message("zh", "something new") == "something new"


def test_a_chinese_page_shows_a_compare_refusal_and_a_404_in_chinese(api):
    zh = {"Accept-Language": "zh-CN"}
    refused = api.client.get("/compare?ids=eval_0000000000000000", headers=zh)
    assert refused.status_code == 400 and "对比需要 2 或 3 个以逗号分隔的评测" in refused.text
    missing = api.client.get("/evaluations/eval_0000000000000000", headers=zh)
    assert missing.status_code == 404 and "没有评测 &#39;eval_0000000000000000&#39;" in missing.text
    assert "no evaluation" in api.client.get("/api/v1/evaluations/eval_0000000000000000", headers=zh).text
    question_set = new_set(api, 1)
    assert api.client.get(f"/evaluations/question-sets/{question_set['id']}", headers=zh).status_code == 200
