package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/zk19/zk19/internal/claims"
)

// The Chinese rendering (-lang zh): the article's two attachments in the
// article's language. 论断证据表 has a row per claim: its sentence of the
// article (claims.Locator), the index's Chinese statement, the verdict in
// Chinese, the decisive observation and the proofs. 验证记录 holds the run,
// what each claim's proofs logged, the pictures, 未验证事项 and 源码依赖.
// The verdicts are the English table's (verdicts); only their words are
// Chinese. Observations stay as the tests logged them.

// zhKinds are the verdict words in Chinese, by English word.
var zhKinds = map[string]string{
	Holds:       "成立",
	Partly:      "成立，部分未运行",
	Refuted:     "被否定",
	Differs:     "已观察到，与原文措辞不同",
	NotRun:      "未运行",
	NotShown:    "未能证明",
	Documentary: "仅作说明",
}

// zhVerdict is a verdict's cell in Chinese: the word, then what the English
// cell says after its own word (the skip reasons, the refuting line, the
// failure), which the tests wrote in English.
func zhVerdict(v Verdict, version string) string {
	word, ok := zhKinds[v.Kind]
	if !ok {
		return v.Text // a kind this rendering does not know: its English cell
	}
	rest := ""
	switch v.Kind {
	case Refuted:
		word = fmt.Sprintf("在 %s 上%s", version, word)
		_, rest, _ = strings.Cut(v.Text, ": ")
	case Differs:
		word = fmt.Sprintf("%s（%s）", word, version)
		_, rest, _ = strings.Cut(v.Text, "; ")
	default:
		rest = strings.TrimPrefix(strings.TrimPrefix(v.Text, v.Kind), ": ")
	}
	if rest == "" {
		return word
	}
	return word + "：" + rest
}

// zhStatus translates the result in a proof's "TestX (pass, 1.2s)".
func zhStatus(test string) string {
	name, rest, ok := strings.Cut(test, " (")
	if !ok {
		return code(test)
	}
	status, after, _ := strings.Cut(strings.TrimSuffix(rest, ")"), ", ")
	if zh, ok := map[string]string{"pass": "通过", "fail": "失败", "skip": "跳过", "did not end": "未结束", "no result": "无结果"}[status]; ok {
		status = zh
	}
	if after != "" {
		status += "，" + after
	}
	return fmt.Sprintf("%s（%s）", code(name), status)
}

// renderMarkdownZh writes EVIDENCE.zh.md.
func renderMarkdownZh(w io.Writer, r report) {
	version := orUnknown(r.h.Version)
	fmt.Fprintf(w, "# zk19 证据：论断证据表与验证记录\n\n"+
		"由 %s 依据 %s 生成，是《%s》的两份附件：论断证据表（每条论断一行）与验证记录。"+
		"每条论断按它在原文中的句子引用（§ 节、¶ 段、句，计数方法见 `internal/claims` 的 `Sentences`）；"+
		"论断的中文陈述出自索引，是转述而非摘抄。测试记下的观察保留原样（英文）。英文版由不带 `-lang zh` 的同一命令生成。\n",
		code(r.m.Generator), code(r.m.Index), r.ix.Article)
	writeClaimsZh(w, r, version)
	fmt.Fprintf(w, "\n## 验证记录\n")
	writeRunZh(w, r)
	writePictures(w, r, zhRecord(version))
	writeDetails(w, r, zhRecord(version))
	writeNotVerifiedZh(w, r.ix)
	writeSourcesZh(w, r)
}

func writeClaimsZh(w io.Writer, r report, version string) {
	fmt.Fprintf(w, "\n## 论断证据表\n\n")
	date := r.run.Start.UTC().Format("2006-01-02 15:04:05 UTC")
	if r.run.Start.IsZero() {
		date = "未知"
	}
	backend, server := r.h.Backend, r.h.Server
	if backend == "" {
		backend = "记录未写明（要求的是 " + orUnknown(r.m.Backend) + "）"
	}
	if server == "" {
		server = "无（记录没有开头信息）"
	}
	fmt.Fprintf(w, "- 日期：%s\n", date)
	fmt.Fprint(w, r.m.Tree.lineZh())
	fmt.Fprintf(w, "- 后端：%s\n- 服务器：%s\n- Go：%s\n", backend, server, r.m.GoVersion)
	if r.h.NoServer != "" {
		fmt.Fprintf(w, "- 说明：%s\n", r.h.NoServer)
	}
	n := map[string]int{}
	for _, v := range r.vs {
		n[v.Kind]++
	}
	var counts []string
	for _, k := range verdictOrder {
		if n[k] > 0 || k == Holds {
			counts = append(counts, fmt.Sprintf("%s %d 条", zhKinds[k], n[k]))
		}
	}
	fmt.Fprintf(w, "- 结论（共 %d 条论断，服务器 %s）：%s\n- 未验证事项：%d 条，见验证记录\n\n", len(r.vs), version, strings.Join(counts, "；"), len(r.ix.Documentary))
	fmt.Fprintf(w, "| 论断 | 原文位置 | 论断内容 | 结论 | 关键观察 | 证明 |\n|---|---|---|---|---|---|\n")
	for _, v := range r.vs {
		id := v.Claim.ID
		if v.Claim.Beyond {
			id += "（超出原文）"
		}
		tests := make([]string, len(v.Tests))
		for i, t := range v.Tests {
			tests[i] = zhStatus(t)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", cell(id), cell(v.Claim.Locator().String()), cell(zhOr(v.Claim.Zh, v.Claim.Statement)),
			cell(zhVerdict(v, version)), cell(decisiveCellZh(v)), cell(strings.Join(tests, "<br>")))
	}
	fmt.Fprintf(w, "\n结论用语：\n\n"+
		"- **%s**：该论断的每个证明都运行并通过。\n"+
		"- **%s**：运行了的证明都通过，其余跳过，各附原因。\n"+
		"- **在 3.x 上%s**：论断在该服务器版本上不成立：它自己的观察与之相反，失败的证明用测试属性 %s 说明；单元格引用观察到的值。\n"+
		"- **%s**：证明通过，且有一个证明以 %s 陈述了观察：服务器的行为超出原文所说，验证记录给出原文的措辞及它在多大程度上成立。\n"+
		"- **%s**：没有证明运行（跳过，附原因）。\n"+
		"- **%s**：证明没走到它的观察（测试装置或故障代理出错、某个准备步骤超时：%s，或失败时没有结论属性），或没有结果；单元格说明原因。这次运行对论断什么也没说明，这不是论断被否定。\n"+
		"- **%s**：这里没有测试能执行的陈述，见“未验证事项”。\n\n"+
		"结论和观察都是数据：证明设置的测试属性（%s），%s 把它们作为事件报告。关键观察是证明以 %s 陈述的观察：论断若不成立，它就会不同。日志行的措辞都不算数。\n",
		zhKinds[Holds], zhKinds[Partly], zhKinds[Refuted], code(claims.VerdictKey("<claim>")+" "+claims.VerdictRefuted),
		zhKinds[Differs], code(claims.AttrDiffers),
		zhKinds[NotRun], zhKinds[NotShown], code(claims.VerdictKey("<claim>")+" "+claims.VerdictNotShown), zhKinds[Documentary],
		code("t.Attr"), code("go test -json"), code(claims.AttrEvidence))
}

func zhOr(zh, en string) string {
	if zh == "" {
		return en
	}
	return zh
}

// decisiveCellZh is the row's observation, as decisiveCell gives it.
func decisiveCellZh(v Verdict) string {
	switch {
	case len(v.Decisive) == 0 && v.Kind == NotRun:
		return "—"
	case len(v.Decisive) == 0:
		return "没有证明陈述观察（" + code(claims.AttrEvidence) + "）"
	}
	zh := v
	if len(v.DecisiveZh) == len(v.Decisive) {
		zh.Decisive = v.DecisiveZh
	}
	return decisiveLines(zh, "……另有 %d 行，见“各论断的记录”")
}

func writeRunZh(w io.Writer, r report) {
	fmt.Fprintf(w, "\n### 运行\n\n")
	var cmds []string
	for _, c := range r.m.Commands {
		cmds = append(cmds, code(c))
	}
	switch {
	case r.m.Source == "":
		fmt.Fprintf(w, "- 命令：%s\n", strings.Join(cmds, "，然后 "))
	case len(cmds) > 0:
		fmt.Fprintf(w, "- 命令：%s（事件读自 %s）\n", strings.Join(cmds, "，然后 "), code(r.m.Source))
	default:
		fmt.Fprintf(w, "- 事件读自 %s（未记录生成它的命令）\n", code(r.m.Source))
	}
	result := map[string]string{"pass": "通过", "FAIL": "失败", "did not end": "未结束"}[packageResult(r.run)]
	fmt.Fprintf(w, "- 包结果：%s（%.0f 秒）\n", result, r.run.Elapsed)
	if r.h.Ensembles != "" {
		fmt.Fprintf(w, "- 集群：%s\n", r.h.Ensembles)
	}
	fmt.Fprintf(w, "- 其他配方的对照测试（%s，不证明任何论断，也不改变任何结论；对照表见英文版）：", code("TestPeer…"))
	if len(r.peers) == 0 {
		fmt.Fprintf(w, "没有运行\n")
		return
	}
	var ps []string
	for _, p := range r.peers {
		ps = append(ps, zhStatus(fmt.Sprintf("%s (%s, %.1fs)", p.Name, p.Action, p.Elapsed)))
	}
	fmt.Fprintf(w, "%s\n", strings.Join(ps, "，"))
}

// zhRecord are the record's words in Chinese.
func zhRecord(version string) recordWords {
	return recordWords{
		pictures: "\n### 运行轨迹图\n\n每张图都由 `internal/diagram` 依据上面这次运行的日志绘制" +
			"（参与者、session id、xid、zxid、token 与故障均按记录），不是手画的。\n",
		picture: "\n#### %s：`%s`\n\n",
		svg:     "SVG：[%s](%s)\n\n",
		noSVG:   "SVG：未生成（%s）；D2 源文件为 %s\n\n",
		viz:     "\n#### porcupine 绘制的线性一致性判定\n\n",
		vizLine: "- %s：%s，[%s](%s)\n",
		listSep: "、",
		details: "\n### 各论断的记录\n\n每条论断：证明陈述的观察（若测试的子测试以论断命名，只取该论断的子测试），以及失败的证明失败在哪里；" +
			"然后作为上下文，按记录顺序列出至多六个操作与故障（invoke、ok、fail、info、nemesis）。\n",
		claim: func(v Verdict) string {
			return fmt.Sprintf("\n#### %s（%s）：%s\n\n%s\n", v.Claim.ID, v.Claim.Locator(), zhVerdict(v, version), zhOr(v.Claim.Zh, v.Claim.Statement))
		},
		differs: func(c claims.Claim) string { return "\n原文的措辞：" + zhOr(c.DiffersZh, c.Differs) + "\n" },
		context: "上下文：",
	}
}

func writeNotVerifiedZh(w io.Writer, ix *claims.Index) {
	fmt.Fprintf(w, "\n### 未验证事项\n\n原文中这里没有测试执行的陈述，各附原因（索引的 %s 列表）；结论为“%s”。"+
		"本项目做法与原文不同之处，原因里会写明。\n\n| 条目 | 原文位置 | 结论 | 陈述 | 原因 |\n|---|---|---|---|---|\n",
		code("documentary"), zhKinds[Documentary])
	for _, d := range ix.Documentary {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", d.ID, cell(d.Locator().String()), zhKinds[Documentary],
			cell(zhOr(d.Zh, d.Subject)), cell(zhOr(d.ReasonZh, d.Reason)))
	}
}

func writeSourcesZh(w io.Writer, r report) {
	fmt.Fprintf(w, "\n### 源码依赖\n\n论断所依赖的服务器代码，在 github.com/apache/zookeeper 的所列标签处阅读"+
		"（本项目的 3.8.0 服务器是 Debian 按 3.8.0 源码构建的，%s 是投票通过为 3.8.0 的候选版本）。"+
		"按文件、方法与行号引用，不复制代码。所列测试会走到这条路径，结果取自本次运行。\n\n", code("release-3.8.0-1"))
	fmt.Fprintf(w, "| 服务器代码 | 论断依赖它什么 | 阅读位置 | 论断 | 执行它的测试 |\n|---|---|---|---|---|\n")
	for _, s := range r.ix.Sources {
		var at, tests []string
		for _, rd := range s.Read {
			at = append(at, fmt.Sprintf("%s（%s）：%s，第 %d 行", rd.Version, code(rd.Tag), code(rd.Method), rd.Line))
		}
		for _, t := range s.Tests {
			tests = append(tests, zhStatus(fmt.Sprintf("%s (%s)", t, r.status(t))))
		}
		fmt.Fprintf(w, "| %s<br>%s | %s | %s | %s | %s |\n", code(s.Code), code(s.File), cell(zhOr(s.RoleZh, s.Role)),
			strings.Join(at, "<br>"), strings.Join(s.Claims, "、"), strings.Join(tests, "<br>"))
	}
}
