package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/zk19/zk19/internal/proof/claims"
)

// lang is one language of the evidence files: the words the generator
// writes itself, around what the proofs stated. The verdicts are decided
// once; a lang only says them (english for EVIDENCE.md, chinese for
// EVIDENCE.zh.md, the article's attachments in the article's language).
type lang struct {
	zh    bool
	kinds map[string]string // verdict words, by kind
	// The verdict cell's phrases (decide).
	unknownVersion, noProof, refutedOn, notShown, notRun, examplesNeed, needs string
	colon, listSep, itemSep, holdsComma, differsOn, failed                    string
	noResult, runEnded, noBuild                                               string
	// recordOpens is claim E4's observation when the record header is right.
	recordOpens, recordCheck string
	doc
}

var english = &lang{
	kinds: map[string]string{Holds: Holds, Partly: Partly, Refuted: Refuted, Differs: Differs,
		NotRun: NotRun, NotShown: NotShown, Documentary: Documentary},
	unknownVersion: "an unknown server version",
	noProof:        "not shown: no Test or Example in the index proves it",
	refutedOn:      "refuted on %s: %q",
	notShown:       "not shown: ",
	notRun:         "not run: ",
	examplesNeed:   "not run: examples need a server: ",
	needs:          " (needs %s)",
	colon:          ": ",
	listSep:        "; ",
	itemSep:        ", ",
	holdsComma:     Holds + ", ",
	differsOn:      Differs + " (on %s)",
	failed:         "%s failed: %s",
	noResult:       "it has no result in the run",
	runEnded:       "the run ended before it finished",
	noBuild:        "the package did not build or TestMain failed: ",
	recordOpens:    "the record opens, before any test, with backend %s, server ZooKeeper %s, ensembles %s",
	recordCheck:    "record check: ",
	doc:            englishDoc,
}

var chinese = &lang{
	zh: true,
	kinds: map[string]string{Holds: "成立", Partly: "成立，部分未运行", Refuted: "被否定", Differs: "已观察到，与原文措辞不同",
		NotRun: "未运行", NotShown: "未能证明", Documentary: "仅作说明"},
	unknownVersion: "未知版本的服务器",
	noProof:        "未能证明：索引中没有证明它的 Test 或 Example",
	refutedOn:      "在 %s 上被否定：%q",
	notShown:       "未能证明：",
	notRun:         "未运行：",
	examplesNeed:   "未运行：Example 需要服务器：",
	needs:          "（需要 %s）",
	colon:          "：",
	listSep:        "；",
	itemSep:        "、",
	holdsComma:     "成立，",
	differsOn:      "已观察到，与原文措辞不同（%s）",
	failed:         "%s 失败：%s",
	noResult:       "它在本次运行中没有结果",
	runEnded:       "运行在它结束之前就结束了",
	noBuild:        "包没有编译通过，或 TestMain 失败：",
	recordOpens:    "记录在任何测试之前以后端 %s、服务器 ZooKeeper %s、集群 %s 开头",
	recordCheck:    "记录检查：",
	doc:            chineseDoc,
}

// word is the verdict word of kind.
func (l *lang) word(kind string) string { return l.kinds[kind] }

// version is the server version as a verdict names it.
func (l *lang) version(v string) string {
	if v == "" {
		return l.unknownVersion
	}
	return v
}

// reason is what a verdict attribute's proof logged after it, in l: its
// Chinese (claims.AttrReasonZh) when the proof stated one.
func (l *lang) reason(a attr) string {
	if l.zh && a.ReasonZh != "" {
		return a.ReasonZh
	}
	return a.Reason
}

func (l *lang) failedLine(name, why string) string { return fmt.Sprintf(l.failed, name, why) }

// logged is a line a test logged, quoted where no proof stated it in l:
// in Chinese, as a code span (a value the record shows as it was logged),
// an Example's differing output in Chinese words around its values.
func (l *lang) logged(line string) string { return loggedIn(line, l.zh) }

// loggedIn is lang.logged, in Chinese when zh.
func loggedIn(line string, zh bool) string {
	if !zh {
		return line
	}
	var got, want string
	if n, _ := fmt.Sscanf(line, outputDiffers, &got, &want); n == 2 {
		return fmt.Sprintf("输出不同：得到 %q，应为 %q", got, want)
	}
	return code(line)
}

// doc is the evidence file's own text in one language: its parts in
// order, headings, and the formats of its lines and cells.
type doc struct {
	parts                                                         []part
	title, date, backendServer, note, goVersion, unknown          string
	noBackend, noServer, command, commandRead, eventsRead, then   string
	pkgResult, ensembles, verdictCount, notVerifiedCount, peerCnt string
	count, noneRan, peersRan                                      string
	results                                                       map[string]string // package and test results, by go test's word
	claimsHead, beyond, noObservation, more                       string
	notVerified, sources, readAt, legend                          string
	details, context, pictures, picture, svg, noSVG, viz, vizLine string
	// The conclusion that opens the file (writeConclusion) and the claim
	// table's parts (writeClaimSections, writeRecords).
	conclusion, verdicts, reportLine, documentaryLine, reportVerdict string
	sectionHead, recordLink, contextFold, pictureFold                string
	claim                                                            func(v Verdict) string
	differs                                                          func(c claims.Claim) string
	commit                                                           [4]string // Tree.line: unknown, unknown changes, no changes, changes
	moreChanges                                                      string
	peerWords
}

// englishDoc is EVIDENCE.md's text.
var englishDoc = doc{
	parts: []part{writeTitle, writeConclusion, writeHeader, writeClaims, writePictures, writePeers, writeNotVerified, writeSources, writeLegend, writeDetails},
	title: "# zk19 evidence\n\nGenerated by %s from %s. One row per claim of %q, " +
		"each cited by its place in the article (section ¶ paragraph); the verdict words are explained under \"Verdict words\".\n",
	conclusion: "\n## Conclusion\n\nThis run's server: ZooKeeper %s (%s backend). The article's own run used the official 3.9.6 server and the Java client (§7 ¶1); " +
		"this machine cannot pull the official image, so zk19 runs Debian's builds: 3.8.0 from bookworm on the process backend " +
		"(EVIDENCE.md, EVIDENCE.zh.md) and 3.9.3 from trixie in the container (EVIDENCE-container.md); the client is go-zookeeper.\n\n",
	verdicts:        "Of %d claims: %s.\n",
	reportLine:      "\n%s (%s) reports the article's own run, not a claim of this one: it is shown beside this run and not counted above (this run's counterpart: %s).\n",
	documentaryLine: "\n%d statements of the article are not verified here (see \"Not verified here\").\n\n## This run\n\n",
	reportVerdict:   reportVerdictEn,
	date:            "- date: %s\n", backendServer: "- backend: %s\n- server: %s\n", note: "- note: %s\n", goVersion: "- go: %s\n",
	unknown: "unknown", noBackend: "none printed (%s asked for)", noServer: "none (no record header)",
	command: "- command: %s\n", commandRead: "- command: %s (its events read back from %s)\n",
	eventsRead: "- events read from %s (the command that wrote them is not recorded)\n", then: ", then ",
	pkgResult: "- package result: %s (%.0fs)\n", verdictCount: "- verdicts (%d claims, on %s): %s\n",
	notVerifiedCount: "- not verified here: %d statements, %s\n", peerCnt: "- peer tests: %s\n\n",
	count: "%d %s", noneRan: "none ran", peersRan: "%d (%s)",
	claimsHead:    "## Claims\n\n| claim | article | verdict | decisive observation | proofs |\n|---|---|---|---|---|\n",
	beyond:        " (beyond)",
	noObservation: "no proof of it states an observation (%s)",
	more:          "… %d more under \"What the tests logged\"",
	notVerified: "\n## Not verified here\n\nStatements of the article that no test here executes, each with the reason " +
		"(the index's %s list). Their verdict is %q.\n\n| item | article | verdict | statement | why not here |\n|---|---|---|---|---|\n",
	sources: "\n## Source dependencies\n\nThe server code the claims rest on, read in github.com/apache/zookeeper at the tags named " +
		"(the project's 3.8.0 server is Debian's build of the 3.8.0 sources; %s is the candidate voted as 3.8.0). " +
		"Places are cited by file, method and line; no code is copied. " +
		"The tests named drive that path; their result is this run's.\n\n" +
		"| server code | what the claims rely on | read at | claims | exercised by |\n|---|---|---|---|---|\n",
	readAt: "%s (%s): %s, line %d",
	legend: "\n## Verdict words\n\n" +
		"- **%s**: every proof of the claim ran and passed.\n" +
		"- **%s**: the proofs that ran passed; the others were skipped, each with its reason.\n" +
		"- **%s on 3.x**: the claim is false on that server version: its own observation contradicted it, and the failed proof " +
		"says so with the test attribute %s; the cell quotes the observed values.\n" +
		"- **%s**: the proofs passed, and one stated an observation as %s: what the server did goes beyond what the article says. " +
		"The details below give the article's wording and how far it holds.\n" +
		"- **%s**: no proof ran (skipped, with the reason).\n" +
		"- **%s**: a proof did not get as far as its observation (the harness or the fault proxy failed, a setup step timed out: " +
		"%s, or a failure without a verdict attribute), or it has no result; the cell says why. The run says nothing about the claim.\n" +
		"- **%s**: a statement no test here can execute; see \"Not verified here\".\n\n" +
		"Verdicts and observations are data: the test attributes (%s) the proofs set, which %s reports as events. " +
		"The decisive observation is what a proof stated as %s: the one that would differ if the claim were false. " +
		"No wording of a log line counts.\n",
	details: "\n## What the tests logged\n\nPer claim: the observations its proofs stated (of a test with subtests named after claims, " +
		"the claim's own subtests) and what a failed proof failed with; then, as context, up to six operations and faults " +
		"(invoke, ok, fail, info, nemesis) in the order they were logged.\n",
	claim: func(v Verdict) string {
		return fmt.Sprintf("\n### %s (%s): %s\n\n%s.\n", v.Claim.ID, v.Claim.Where(), verdictEn(v), strings.TrimSuffix(v.Claim.Statement, "."))
	},
	differs: func(c claims.Claim) string { return "\nThe article's wording: " + c.Differs + "\n" },
	context: "context:",
	pictures: "\n## Pictures of the runs\n\nEach diagram is drawn by `internal/record/diagram` from the log of the run above " +
		"(participants, session ids, xids, zxids, tokens and faults as they were recorded), never by hand.\n",
	picture: "\n### %s: `%s`\n\n",
	svg:     "SVG: [%s](%s)\n\n",
	noSVG:   "SVG: not rendered (%s); the D2 source is %s\n\n",
	viz:     "\n### Linearizability verdicts, as porcupine draws them\n\n",
	vizLine: "- %s: %s, [%s](%s)\n",
	commit: [4]string{"- commit: unknown (%s)\n", "- commit: %s; whether the tree had changes is unknown (%s)\n",
		"- commit: %s; the tree had no changes (git status --porcelain printed nothing)\n",
		"- commit: %s; the tree had changes (git status --porcelain: %d): %s\n"},
	moreChanges: "and %d more",
	peerWords:   englishPeers,
}

// chineseDoc is EVIDENCE.zh.md's text.
var chineseDoc = doc{
	parts: []part{writeTitle, writeConclusion, writeHeader, writeClaimSections, writeLegend, heading("\n## 验证记录\n"),
		writeRecords, writePictures, writePeers, writeNotVerified, writeSources},
	title: "# 附录：论断证据表与验证记录\n\n" +
		"由 %s 依据 %s 生成，是《%s》的附录：先是结论，然后是论断证据表（按原文的顺序，每条论断一行），最后是验证记录。" +
		"每条论断按它在原文中的句子引用（§ 节、¶ 段、句，计数方法见 `internal/proof/claims` 的 `Sentences`）；" +
		"论断的中文陈述出自索引，是转述而非摘抄；「」里是原文的用语。测试记下的观察、失败原因与对照表的单元格，按 `internal/proof/claims/zh` 的中文格式表译出，" +
		"其中的值（路径、错误、token）保留原样；用词依原文（`testdata/glossary.json`）。英文版由不带 `-lang zh` 的同一命令生成。\n",
	conclusion: "\n## 结论\n\n本次运行的服务器是 ZooKeeper %s（%s 后端）。原文的运行用的是官方 3.9.6 服务与 Java 客户端（§7 ¶1）；" +
		"本机拉不到官方镜像，所以 zk19 用 Debian 构建的服务器：进程后端上是 Debian bookworm 的 3.8.0（EVIDENCE.md、EVIDENCE.zh.md），" +
		"容器后端上是 Debian trixie 的 3.9.3（EVIDENCE-container.md）；客户端是 go-zookeeper，不是 Java 客户端。\n\n",
	verdicts:        "%d 条论断中：%s。\n",
	reportLine:      "\n%s（%s）是原文对它自己那次运行的报告，不是本次运行的论断：它与本次运行并列列出，不计入上面的结论（本次对应的检查：%s）。\n",
	documentaryLine: "\n另有 %d 条原文陈述这里没有测试执行，见“未验证事项”。\n\n### 本次运行\n\n",
	reportVerdict:   reportVerdictZh,
	sectionHead:     "| 论断 | 位置 | 原文用语 | 论断内容 | 结论 | 关键观察 | 记录与证明 |\n|---|---|---|---|---|---|---|\n",
	recordLink:      "[记录](#%s)",
	contextFold:     "上下文：操作与故障（%d 行）",
	pictureFold:     "%s：`%s` 的轨迹图",
	date:            "- 日期：%s\n", backendServer: "- 后端：%s\n- 服务器：%s\n", note: "- 说明：%s\n", goVersion: "- Go：%s\n",
	unknown: "未知", noBackend: "记录未写明（要求的是 %s）", noServer: "无（记录没有开头信息）",
	command: "- 命令：%s\n", commandRead: "- 命令：%s（事件读自 %s）\n", eventsRead: "- 事件读自 %s（未记录生成它的命令）\n", then: "，然后 ",
	pkgResult: "- 包结果：%s（%.0f 秒）\n", ensembles: "- 集群：%s\n", verdictCount: "- 结论（共 %d 条论断，服务器 %s）：%s\n",
	notVerifiedCount: "- 未验证事项：%d 条，结论为“%s”，见验证记录\n", peerCnt: "- 其他配方的对照测试：%s\n\n",
	count: "%[2]s %[1]d 条", noneRan: "没有运行", peersRan: "%d 个（%s）",
	claimsHead: "\n## 论断证据表\n\n按原文的顺序，在原文各节的标题下，每条论断一行：它在原文中的句子（§ 节、¶ 段、句）、原文用语、论断的中文陈述、结论、" +
		"一条关键观察（至多 120 字；完整的观察见该论断的记录）、它的记录与证明（测试、结果与用时、源码位置）。\n",
	beyond:        "（超出原文）",
	noObservation: "没有证明陈述观察（%s）",
	more:          "……另有 %d 行，见“各论断的记录”",
	notVerified: "\n### 未验证事项\n\n原文中这里没有测试执行的陈述，各附原因（索引的 %s 列表）；结论为“%s”。" +
		"本项目做法与原文不同之处，原因里会写明。\n\n| 条目 | 原文位置 | 结论 | 陈述 | 原因 |\n|---|---|---|---|---|\n",
	sources: "\n### 源码依赖\n\n论断所依赖的服务器代码，在 github.com/apache/zookeeper 的所列标签处阅读" +
		"（本项目的 3.8.0 服务器是 Debian 按 3.8.0 源码构建的，%s 是投票通过为 3.8.0 的候选版本）。" +
		"按文件、方法与行号引用，不复制代码。所列测试会走到这条路径，结果取自本次运行。\n\n" +
		"| 服务器代码 | 论断依赖它什么 | 阅读位置 | 论断 | 执行它的测试 |\n|---|---|---|---|---|\n",
	readAt: "%s（%s）：%s，第 %d 行",
	legend: "\n结论用语：\n\n" +
		"- **%s**：该论断的每个证明都运行并通过。\n" +
		"- **%s**：运行了的证明都通过，其余跳过，各附原因。\n" +
		"- **在 3.x 上%s**：论断在该服务器版本上不成立：它自己的观察与之相反，失败的证明用测试属性 %s 说明；单元格引用观察到的值。\n" +
		"- **%s**：证明通过，且有一个证明以 %s 陈述了观察：服务器的行为超出原文所说，验证记录给出原文的措辞及它在多大程度上成立。\n" +
		"- **%s**：没有证明运行（跳过，附原因）。\n" +
		"- **%s**：证明没走到它的观察（测试装置或故障代理出错、某个准备步骤超时：%s，或失败时没有结论属性），或没有结果；单元格说明原因。这次运行对论断什么也没说明，这不是论断被否定。\n" +
		"- **%s**：这里没有测试能执行的陈述，见“未验证事项”。\n\n" +
		"结论和观察都是数据：证明设置的测试属性（%s），%s 把它们作为事件报告。关键观察是证明以 %s 陈述的观察：论断若不成立，它就会不同。日志行的措辞都不算数。\n",
	details: "\n### 各论断的记录\n\n按原文的顺序。每条论断：证明陈述的观察（若测试的子测试以论断命名，只取该论断的子测试），以及失败的证明失败在哪里；" +
		"然后是折叠起来的上下文：按记录顺序列出至多六个操作与故障（invoke、ok、fail、info、nemesis）。\n",
	claim: func(v Verdict) string {
		return fmt.Sprintf("\n##### %s（%s）：%s\n\n%s\n", v.Claim.ID, v.Claim.Locator(), verdictZh(v), zhOr(v.Claim.Zh, v.Claim.Statement))
	},
	differs: func(c claims.Claim) string { return "\n原文的措辞：" + zhOr(c.DiffersZh, c.Differs) + "\n" },
	context: "上下文：",
	pictures: "\n### 运行轨迹图\n\n每张图都由 `internal/record/diagram` 依据上面这次运行的日志绘制" +
		"（参与者、sessionId、xid、zxid、token 与故障均按记录），不是手画的。\n",
	picture: "\n#### %s：`%s`\n\n",
	svg:     "SVG：[%s](%s)\n\n",
	noSVG:   "SVG：未生成（%s）；D2 源文件为 %s\n\n",
	viz:     "\n#### porcupine 绘制的线性一致性判定\n\n",
	vizLine: "- %s：%s，[%s](%s)\n",
	commit: [4]string{"- 提交：未知（%s）\n", "- 提交：%s；不知道工作树有没有改动（%s）\n",
		"- 提交：%s；工作树没有改动（`git status --porcelain` 无输出）\n",
		"- 提交：%s；工作树有改动（`git status --porcelain` 列出 %d 项）：%s\n"},
	moreChanges: "另有 %d 项",
	results:     map[string]string{"pass": "通过", "fail": "失败", "skip": "跳过", "FAIL": "失败", "did not end": "未结束", "no result": "无结果"},
	peerWords:   chinesePeers,
}

// verdictZh is the verdict of a claim's record heading in Chinese: that
// of a sentence that reports the article's own run says so.
func verdictZh(v Verdict) string {
	if v.Claim.Report {
		return fmt.Sprintf(reportVerdictZh, v.TextZh)
	}
	return v.TextZh
}

// verdictEn is verdictZh in English.
func verdictEn(v Verdict) string {
	if v.Claim.Report {
		return fmt.Sprintf(reportVerdictEn, v.Text)
	}
	return v.Text
}

// reportVerdictEn is reportVerdictZh in English.
const reportVerdictEn = "the article's own run (this run's counterpart: %s)"

// reportVerdictZh is the verdict of a sentence that reports the article's
// own run, around this run's counterpart's (lang.reportVerdict).
const reportVerdictZh = "原文自己的运行（本次对应的检查：%s）"

// status is a go test result in l.
func (l *lang) status(s string) string {
	if w, ok := l.results[s]; ok {
		return w
	}
	return s
}

// proof is a proof's "TestX (pass, 1.2s)" in l.
func (l *lang) proof(test string) string {
	name, rest, ok := strings.Cut(test, " (")
	if !l.zh {
		name, rest, _ = strings.Cut(test, " ")
		return code(name) + " " + rest
	}
	if !ok {
		return code(test)
	}
	status, after, _ := strings.Cut(strings.TrimSuffix(rest, ")"), ", ")
	status = l.status(status)
	if after != "" {
		status += "，" + after
	}
	return fmt.Sprintf("%s（%s）", code(name), status)
}

// where is a claim's place in the article: its paragraph, or in Chinese
// its sentence.
func (l *lang) where(c claims.Claim) string {
	if l.zh {
		return c.Locator().String()
	}
	return c.Where()
}

// text is a verdict's cell in l.
func (l *lang) text(v Verdict) string {
	if l.zh {
		return v.TextZh
	}
	return v.Text
}

// verdictCell is a verdict's cell in l, where a sentence that reports
// the article's own run says so around this run's counterpart's.
func (l *lang) verdictCell(v Verdict) string {
	if v.Claim.Report {
		return fmt.Sprintf(l.reportVerdict, l.text(v))
	}
	return l.text(v)
}

// decisive are a verdict's observations in l: in Chinese, those its
// proofs stated in Chinese.
func (l *lang) decisive(v Verdict) []string {
	if l.zh && len(v.DecisiveZh) == len(v.Decisive) {
		return v.DecisiveZh
	}
	return v.Decisive
}

// sizeWords are the record header's ensemble sizes ("standalone (…); 3
// servers (…)") in Chinese.
var sizeWords = regexp.MustCompile(`\bstandalone\b|\b(\d+) servers\b`)

// sizes is the header's ensembles in l's language.
func (l *lang) sizes(ensembles string) string {
	if !l.zh {
		return ensembles
	}
	return sizeWords.ReplaceAllStringFunc(ensembles, func(m string) string {
		if m == "standalone" {
			return "单机"
		}
		return strings.TrimSuffix(m, " servers") + " 台服务器"
	})
}

// sizesOf is recordOpens's values with the ensembles (the last) in l's
// language.
func (l *lang) sizesOf(seen []any) []any {
	out := append([]any(nil), seen...)
	if s, ok := out[len(out)-1].(string); ok {
		out[len(out)-1] = l.sizes(s)
	}
	return out
}
