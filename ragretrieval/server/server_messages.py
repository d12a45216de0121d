"""The server's refusals as a Chinese page shows them (the error page): each message the stores raise is matched
by its shape and said again in Chinese with the same values (names, ids, counts), so a Chinese reader never meets
an English sentence; a message without a translation here stays English. The JSON API's `detail` stays English for
scripts; beside it, `message` carries a refusal in the requesting page's language (its cookie or Accept-Language),
which the pages' scripts show."""

from __future__ import annotations

import re

_ZH = [
    (r"no evaluation (?P<id>'[^']*')(?P<more> \(and (?P<n>\d+) more\))?", "没有评测 {id}"),
    (r"no question set (?P<id>'[^']*')", "没有问题集 {id}"),
    (r"no question (?P<q>'[^']*') in evaluation (?P<id>'[^']*')", "评测 {id} 中没有问题 {q}"),
    (r"no question (?P<id>'[^']*')", "没有问题 {id}"),
    (r"question #(?P<n>\d+) was annotated by someone else meanwhile \(version (?P<seen>\d+), you saw (?P<saw>\d+)\): "
     r"its annotation is now (?P<now>\w+); reload to see it",
     "问题 #{n} 在此期间已被他人标注（版本 {seen}，你看到的是 {saw}）：现在的标注是 {now}；请重新加载查看"),
    (r"question #(?P<n>\d+) has no answer yet \((?P<state>[A-Z]+)\): annotate it once it is answered",
     "问题 #{n} 还没有回答（{state}）：回答后再标注"),
    (r"question #(?P<n>\d+) got no answer \(its request failed\): there is nothing to annotate",
     "问题 #{n} 没有得到回答（请求失败）：没有可标注的内容"),
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
    # the Generate dialog's failures (generate.py's web_message) and the server's missing key
    (r"the model endpoint did not answer in time; check the base URL and model, then try again",
     "模型端点未能及时回答；请检查基础 URL 和模型后重试"),
    (r"the model endpoint answered something that is not a completion; check the base URL and model, then try again",
     "模型端点的回答不是补全结果；请检查基础 URL 和模型后重试"),
    (r"the model endpoint could not be reached; check the base URL and model, then try again",
     "无法连接模型端点；请检查基础 URL 和模型后重试"),
    (r"the model endpoint answered (?P<status>\d+); try again", "模型端点返回了 {status}；请重试"),
    (r"the model endpoint answered (?P<status>\d+): it refused the server's API key; the server's operator sets the "
     r"key", "模型端点返回了 {status}：它拒绝了服务器的 API 密钥；密钥由服务器的管理员设置"),
    (r"the model endpoint answered (?P<status>\d+); check the model and the base URL",
     "模型端点返回了 {status}；请检查模型和基础 URL"),
    (r"no API key: set the environment variable (?P<name>\S+) \(a local endpoint that ignores keys accepts any "
     r"value, e\.g\. (?P=name)=local\)",
     "没有 API 密钥：请设置环境变量 {name}（不检查密钥的本地端点接受任意值，例如 {name}=local）"),
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
