"""The server's refusals as a Chinese page shows them (the error page): each message the stores raise is matched
by its shape and said again in Chinese with the same values (names, ids, counts), so a Chinese reader never meets
an English sentence; a message without a translation here stays English. The JSON API stays English."""

from __future__ import annotations

import re

_ZH = [
    (r"no evaluation (?P<id>'[^']*')(?P<more> \(and (?P<n>\d+) more\))?", "没有评测 {id}"),
    (r"no question set (?P<id>'[^']*')", "没有问题集 {id}"),
    (r"no question (?P<q>'[^']*') in evaluation (?P<id>'[^']*')", "评测 {id} 中没有问题 {q}"),
    (r"no question (?P<id>'[^']*')", "没有问题 {id}"),
    (r"no language (?P<code>'[^']*'); the pages are in (?P<langs>.*)", "没有语言 {code}；页面语言有 {langs}"),
    (r"evaluation (?P<name>'.*') has no stored run to compare \(it is (?P<status>[A-Z]+)\); compare completed "
     r"evaluations", "评测 {name} 没有可对比的已存储运行（状态为 {status}）；只能对比已完成的评测"),
    (r"evaluation (?P<name>'.*') has no stored run to compare \(its run could not be stored\); compare completed "
     r"evaluations", "评测 {name} 没有可对比的已存储运行（其运行未能存储）；只能对比已完成的评测"),
    (r"evaluation (?P<name>'.*'): its stored run (?P<run>\S+) was removed from the runs history \(ragretrieval runs "
     r"rm\)", "评测 {name}：其已存储的运行 {run} 已从运行历史中删除"),
    (r"ids: compare takes 2 or 3 evaluations separated by commas; got (?P<n>\d+)",
     "ids：对比需要 2 或 3 个以逗号分隔的评测；收到 {n} 个"),
    (r"ids: evaluation (?P<id>'[^']*') is named twice; an evaluation compared with itself differs nowhere",
     "ids：评测 {id} 出现了两次；评测与自身对比不会有任何差异"),
    (r"these evaluations have no question in common, so nothing can be paired: (?P<rest>.*)",
     "这些评测没有共同的问题，无法配对：{rest}"),
    (r"filter must be one of (?P<values>.*); got (?P<got>.*)", "filter 只能是 {values} 之一；收到 {got}"),
    (r"order must be one of (?P<values>.*); got (?P<got>.*)", "order 只能是 {values} 之一；收到 {got}"),
    (r"metric (?P<metric>'.*') is not among the compared metrics \(e\.g\. (?P<some>.*)\)",
     "指标 {metric} 不在对比的指标中（例如 {some}）"),
]
_PATTERNS = [(re.compile(pattern, re.DOTALL), template) for pattern, template in _ZH]


def server_message(language: str, message: str) -> str:
    """`message` as a page in `language` shows it (unchanged in English, or when it has no translation)."""
    if language != "zh" or not message:
        return message
    for pattern, template in _PATTERNS:
        found = pattern.fullmatch(message)
        if found:
            return template.format(**found.groupdict())
    return message
