package console

import (
	"net/http"
	"strings"
)

// The console's texts, English and Portuguese, from one catalogue: a key
// missing in one language is a test failure, not a blank on the page.
var messages = map[string][2]string{ // key: {en, pt}
	"app.name":             {"payledger console", "console payledger"},
	"nav.payments":         {"Payments", "Pagamentos"},
	"nav.reviews":          {"Reviews", "Revisões"},
	"nav.deadletters":      {"Dead letters", "Mensagens mortas"},
	"nav.skip":             {"Skip to content", "Ir para o conteúdo"},
	"nav.signout":          {"Sign out", "Sair"},
	"nav.language":         {"Language", "Idioma"},
	"nav.signed_in_as":     {"Signed in as", "Conectado como"},
	"role.read":            {"read", "leitura"},
	"role.admin":           {"admin", "administração"},
	"signin.title":         {"Sign in", "Entrar"},
	"signin.token":         {"API token", "Token da API"},
	"signin.help":          {"Paste a token of LEDGER_API_TOKENS. It is kept in a sealed session cookie, never in a URL.", "Cole um token de LEDGER_API_TOKENS. Ele fica num cookie de sessão selado, nunca numa URL."},
	"signin.submit":        {"Sign in", "Entrar"},
	"signin.bad":           {"That token is not configured.", "Esse token não está configurado."},
	"payments.title":       {"Payments", "Pagamentos"},
	"payments.search":      {"Search", "Buscar"},
	"payments.provider":    {"Provider", "Provedor"},
	"payments.id":          {"Payment ID", "ID do pagamento"},
	"payments.status":      {"Status", "Status"},
	"payments.review":      {"Needs review", "Requer revisão"},
	"payments.any":         {"any", "qualquer"},
	"payments.amount":      {"Amount", "Valor"},
	"payments.updated":     {"Last fact", "Último fato"},
	"payments.from":        {"Created from (UTC day)", "Criado de (dia UTC)"},
	"payments.to":          {"Created to (UTC day)", "Criado até (dia UTC)"},
	"payments.min":         {"Amount at least", "Valor mínimo"},
	"payments.max":         {"Amount at most", "Valor máximo"},
	"payments.bad_filter":  {"That filter cannot be used:", "Esse filtro não pode ser usado:"},
	"payments.none":        {"No payment matches.", "Nenhum pagamento corresponde."},
	"payments.next":        {"Next page", "Próxima página"},
	"payments.open":        {"Open", "Abrir"},
	"payment.title":        {"Payment", "Pagamento"},
	"payment.captured":     {"Captured", "Capturado"},
	"payment.refunded":     {"Refunded", "Reembolsado"},
	"payment.disputed":     {"Disputed", "Contestado"},
	"payment.fee":          {"Fee", "Tarifa"},
	"payment.flags":        {"Flags", "Sinais"},
	"payment.parked":       {"parked: the read model may be behind its stream", "estacionado: o modelo de leitura pode estar atrasado"},
	"payment.timeline":     {"Timeline (fold order: provider time, then arrival)", "Linha do tempo (ordem do fold: hora do provedor, depois chegada)"},
	"payment.occurred":     {"Provider time", "Hora do provedor"},
	"payment.recorded":     {"Stored", "Gravado"},
	"payment.type":         {"Fact", "Fato"},
	"payment.changed":      {"What it changed", "O que mudou"},
	"payment.state_after":  {"State after", "Estado depois"},
	"payment.fields":       {"Its fields", "Seus campos"},
	"payment.reversal":     {"reversal", "estorno"},
	"payment.source":       {"Source", "Origem"},
	"payment.late":         {"arrived late", "chegou atrasado"},
	"payment.repeat":       {"redelivery of a fact already stored", "reentrega de um fato já gravado"},
	"payment.body":         {"Raw body", "Corpo bruto"},
	"payment.entries":      {"Journal entries", "Lançamentos"},
	"payment.no_entries":   {"No journal entry.", "Nenhum lançamento."},
	"payment.account":      {"Account", "Conta"},
	"payment.debit":        {"Debit", "Débito"},
	"payment.credit":       {"Credit", "Crédito"},
	"payment.effective":    {"Effective", "Efetivo"},
	"payment.evidence":     {"Evidence", "Evidência"},
	"payment.verification": {"Signature now", "Assinatura agora"},
	"payment.chain":        {"Chain", "Cadeia"},
	"payment.download_zip": {"Download the evidence zip", "Baixar o zip de evidências"},
	"payment.reconcile":    {"Reconcile now", "Reconciliar agora"},
	"payment.reconciled":   {"A reconciliation check is queued.", "Uma verificação de reconciliação foi enfileirada."},
	"payment.asof":         {"As of (RFC 3339, UTC)", "Em (RFC 3339, UTC)"},
	"payment.asof_pick":    {"Pick a moment (your time zone)", "Escolha um momento (seu fuso)"},
	"payment.basis":        {"Basis", "Base"},
	"payment.effective_b":  {"effective (provider time)", "efetiva (hora do provedor)"},
	"payment.recorded_b":   {"recorded (what we knew then)", "registrada (o que sabíamos então)"},
	"payment.show":         {"Show", "Mostrar"},
	"payment.now":          {"Now", "Agora"},
	"admin.only":           {"Needs an admin token.", "Requer um token de administração."},
	"reviews.title":        {"Review queue", "Fila de revisão"},
	"reviews.none":         {"No open review.", "Nenhuma revisão aberta."},
	"reviews.opened":       {"Opened", "Aberta"},
	"reviews.reasons":      {"Reasons", "Motivos"},
	"reviews.resolution":   {"Resolution", "Resolução"},
	"reviews.note":         {"Note", "Nota"},
	"reviews.resolve":      {"Resolve", "Resolver"},
	"reviews.resolved":     {"The review is resolved; the resolution is a fact in the payment's stream.", "A revisão foi resolvida; a resolução é um fato no fluxo do pagamento."},
	"dl.title":             {"Dead letters", "Mensagens mortas"},
	"dl.none":              {"No open dead letter.", "Nenhuma mensagem morta aberta."},
	"dl.kind":              {"Kind", "Tipo"},
	"dl.cause":             {"Cause", "Causa"},
	"dl.attempts":          {"Attempts", "Tentativas"},
	"dl.last_error":        {"Last error", "Último erro"},
	"dl.first_failed":      {"First failed", "Primeira falha"},
	"dl.retry":             {"Retry", "Tentar de novo"},
	"dl.retried":           {"The dead letter was retried.", "A mensagem morta foi reprocessada."},
	"nav.ledger":           {"Ledger", "Razão"},
	"nav.reconciliation":   {"Reconciliation", "Conciliação"},
	"nav.health":           {"Health", "Saúde"},
	"ledger.title":         {"Ledger", "Razão"},
	"ledger.from":          {"From", "De"},
	"ledger.to":            {"To", "Até"},
	"ledger.balances":      {"Balances", "Saldos"},
	"ledger.balance":       {"Balance", "Saldo"},
	"ledger.currency":      {"Currency", "Moeda"},
	"ledger.daily":         {"Daily activity: sales, refunds, chargebacks, fees", "Movimento diário: vendas, reembolsos, estornos, tarifas"},
	"ledger.none":          {"No entry in this view.", "Nenhum lançamento nesta visão."},
	"ledger.csv_balances":  {"Download these balances (CSV)", "Baixar estes saldos (CSV)"},
	"ledger.csv_daily":     {"Download the daily rows (CSV)", "Baixar as linhas diárias (CSV)"},
	"ledger.csv_entries":   {"Download the entries (CSV)", "Baixar os lançamentos (CSV)"},
	"recon.title":          {"Reconciliation", "Conciliação"},
	"recon.summary":        {"Checks by outcome, and money in doubt", "Verificações por resultado, e dinheiro em dúvida"},
	"recon.since":          {"Checks counted since", "Verificações contadas desde"},
	"recon.in_doubt":       {"In doubt (amount · payments · quiet since)", "Em dúvida (valor · pagamentos · sem fatos desde)"},
	"recon.corrections":    {"Corrections by cause, last 30 days (UTC)", "Correções por causa, últimos 30 dias (UTC)"},
	"recon.day":            {"Day", "Dia"},
	"recon.more":           {"More corrections than counted here: the oldest days are incomplete.", "Mais correções do que as contadas aqui: os dias mais antigos estão incompletos."},
	"recon.no_corrections": {"No correction in the last 30 days.", "Nenhuma correção nos últimos 30 dias."},
	"recon.log":            {"Latest checks", "Últimas verificações"},
	"recon.checked":        {"Checked", "Verificado"},
	"recon.trigger":        {"Why", "Motivo"},
	"recon.outcome":        {"Outcome", "Resultado"},
	"recon.none":           {"No check yet.", "Nenhuma verificação ainda."},
	"health.title":         {"Health", "Saúde"},
	"health.what":          {"What", "O quê"},
	"health.value":         {"Now", "Agora"},
	"health.metric":        {"Metric", "Métrica"},
	"health.absent":        {"not in this process", "não neste processo"},
	"health.help":          {"Read from this process's /metrics; a role running elsewhere shows there.", "Lido do /metrics deste processo; um papel que roda em outro lugar aparece lá."},
	"health.lag":           {"Projection lag (seconds)", "Atraso da projeção (segundos)"},
	"health.leader":        {"This process leads the projection", "Este processo lidera a projeção"},
	"health.parked":        {"Parked payments", "Pagamentos estacionados"},
	"health.dead_letters":  {"Open dead letters", "Mensagens mortas abertas"},
	"health.reviews":       {"Open reviews", "Revisões abertas"},
	"health.in_doubt":      {"Payments in doubt", "Pagamentos em dúvida"},
	"health.jobs":          {"Background jobs by state", "Tarefas em segundo plano por estado"},
	"health.breaker":       {"Provider circuit breaker open", "Disjuntor do provedor aberto"},
	"dl.detail":            {"Dead letter", "Mensagem morta"},
	"dl.state":             {"State", "Estado"},
	"dl.streams":           {"Streams", "Fluxos"},
	"dl.last_failed":       {"Last failed", "Última falha"},
	"dl.retries":           {"Retries", "Reprocessamentos"},
	"dl.retried_by":        {"Retried by", "Reprocessada por"},
	"dl.payload":           {"Payload", "Conteúdo"},
	"dl.bulk":              {"Retry every open dead letter of this filter…", "Reprocessar todas as mensagens mortas abertas deste filtro…"},
	"dl.bulk_title":        {"Retry dead letters", "Reprocessar mensagens mortas"},
	"dl.bulk_question":     {"Open dead letters this filter matches now:", "Mensagens mortas abertas que este filtro seleciona agora:"},
	"dl.bulk_confirm":      {"Yes, retry them", "Sim, reprocessar"},
	"dl.bulk_cancel":       {"Cancel", "Cancelar"},
	"dl.bulk_retried":      {"Dead letters retried:", "Mensagens mortas reprocessadas:"},
	"dl.bulk_nothing":      {"Nothing to retry.", "Nada a reprocessar."},
	"error.title":          {"Something went wrong", "Algo deu errado"},
	"error.not_found":      {"There is no such page.", "Essa página não existe."},
	"error.signed_out":     {"You are signed out. Sign in again.", "Você saiu. Entre de novo."},
	"error.csrf":           {"This form expired or did not come from the console. Reload the page and try again.", "Este formulário expirou ou não veio do console. Recarregue a página e tente de novo."},
	"error.admin_only":     {"Only an admin token may do this.", "Só um token de administração pode fazer isso."},
	"error.api":            {"The ledger refused:", "O ledger recusou:"},
	"error.internal":       {"The ledger could not answer. Try again.", "O ledger não conseguiu responder. Tente de novo."},
	"error.back":           {"Back to payments", "Voltar aos pagamentos"},
}

// languages the catalogue holds, by index into messages' pairs.
var languages = map[string]int{"en": 0, "pt": 1}

// catalogue returns the lookup of lang; an unknown key shows as itself, so
// a missing text is visible (and tested).
func catalogue(lang string) func(string) string {
	i := languages[lang]
	return func(key string) string {
		if m, ok := messages[key]; ok {
			return m[i]
		}
		return key
	}
}

const langCookie = "ledger_lang"

// language is the cookie's choice, else the first of Accept-Language the
// catalogue holds, else English.
func language(r *http.Request) string {
	if c, err := r.Cookie(langCookie); err == nil {
		if _, ok := languages[c.Value]; ok {
			return c.Value
		}
	}
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		base, _, _ := strings.Cut(strings.ToLower(tag), "-")
		if _, ok := languages[base]; ok {
			return base
		}
	}
	return "en"
}

// setLang serves GET /console/lang/{lang}: the switch, back to where the
// person was (a same-site path only).
func (c *Console) setLang(w http.ResponseWriter, r *http.Request) {
	lang := r.PathValue("lang")
	if _, ok := languages[lang]; !ok {
		c.notFound(w, r)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: langCookie, Value: lang, Path: "/console/", SameSite: http.SameSiteStrictMode,
		Secure: !loopback(r), MaxAge: 365 * 24 * 3600})
	http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
}

// safeNext keeps a redirect target inside the console.
func safeNext(next string) string {
	if strings.HasPrefix(next, "/console/") && !strings.HasPrefix(next, "//") && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return "/console/payments"
}
