package claims

// zhVerdicts are the verdict words of a failure line in Chinese.
var zhVerdicts = map[string]string{VerdictRefuted: "被否定", VerdictNotShown: "未能证明"}
