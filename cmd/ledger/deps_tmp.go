package main
import (
 _ "github.com/jackc/pgx/v5"
 _ "github.com/jackc/pgx/v5/pgxpool"
 _ "github.com/jackc/pgx/v5/stdlib"
 _ "github.com/pressly/goose/v3"
 _ "github.com/gorilla/mux"
 _ "github.com/google/uuid"
 _ "pgregory.net/rapid"
 _ "github.com/prometheus/client_golang/prometheus"
)
func main(){}
